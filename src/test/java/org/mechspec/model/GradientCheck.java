package org.mechspec.model;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Central finite differences against the explicit backward, in fp64: for every trainable tensor, the largest
 * |numeric − analytic| over its elements divided by the largest |analytic| of the tensor.
 */
public final class GradientCheck {
    private GradientCheck() {
    }

    /** Relative error per trainable tensor (name → error), every element perturbed by ±h. */
    public static Map<String, Double> relativeErrors(Qwen2Model model, Batch batch, DropoutMasks masks, double h) {
        requireCheckable(model);
        model.zeroGrad();
        model.forward(batch, masks).backward();
        return relativeErrors(model, batch, masks, h, gradients(model));
    }

    /** A copy of every trainable tensor's accumulated gradient, by name. */
    static Map<String, Tensor> gradients(Qwen2Model model) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (Parameter p : model.trainableParameters()) {
            out.put(p.name(), p.grad().copy());
        }
        return out;
    }

    /**
     * The same comparison for given analytic gradients (name → tensor, one per trainable tensor): the check
     * judges whatever gradient it is handed, not only the one this model's backward computes.
     */
    static Map<String, Double> relativeErrors(Qwen2Model model, Batch batch, DropoutMasks masks, double h,
                                              Map<String, Tensor> analyticGradients) {
        List<Parameter> params = requireCheckable(model);
        Map<String, Double> errors = new LinkedHashMap<>();
        for (Parameter p : params) {
            Tensor grad = analyticGradients.get(p.name());
            if (grad == null || grad.size() != p.value().size()) {
                throw new IllegalArgumentException("no analytic gradient of the shape of " + p.name());
            }
            Tensor w = p.value();
            double maxDiff = 0.0;
            double maxAnalytic = 0.0;
            for (int i = 0; i < w.size(); i++) {
                double original = w.get(i);
                w.set(i, original + h);
                double plus = model.forward(batch, masks).loss();
                w.set(i, original - h);
                double minus = model.forward(batch, masks).loss();
                w.set(i, original);
                double numeric = (plus - minus) / (2 * h);
                double analytic = grad.get(i);
                maxDiff = Math.max(maxDiff, Math.abs(numeric - analytic));
                maxAnalytic = Math.max(maxAnalytic, Math.abs(analytic));
            }
            errors.put(p.name(), maxDiff / Math.max(maxAnalytic, 1e-12));
        }
        return errors;
    }

    /** The model's trainable parameters, after checking finite differences can be taken on it. */
    private static List<Parameter> requireCheckable(Qwen2Model model) {
        if (model.precision() != Precision.FP64) {
            throw new IllegalArgumentException("finite differences need the fp64 model, got " + model.precision());
        }
        List<Parameter> params = model.trainableParameters();
        if (params.isEmpty()) {
            throw new IllegalArgumentException("the model has no trainable parameters to check");
        }
        return params;
    }
}
