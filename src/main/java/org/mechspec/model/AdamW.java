package org.mechspec.model;

import java.util.ArrayList;
import java.util.List;

/**
 * AdamW as PyTorch defines it (decoupled weight decay θ ← θ − lr·λ·θ, then the bias-corrected Adam step
 * θ ← θ − lr·m̂/(√v̂ + ε)); λ = 0 is plain Adam. Moments are stored in the parameters' precision; the update of
 * each element is computed in double and rounded once.
 */
public final class AdamW {
    private final List<Parameter> parameters;
    private final List<Tensor> firstMoments = new ArrayList<>();
    private final List<Tensor> secondMoments = new ArrayList<>();
    private final double beta1;
    private final double beta2;
    private final double eps;
    private final double weightDecay;
    private int step;

    public AdamW(List<Parameter> parameters, double beta1, double beta2, double eps, double weightDecay) {
        if (parameters.isEmpty()) {
            throw new IllegalArgumentException("AdamW needs at least one trainable parameter");
        }
        if (!(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1 && eps > 0 && weightDecay >= 0)) {
            throw new IllegalArgumentException("invalid AdamW settings: beta1 " + beta1 + ", beta2 " + beta2 + ", eps "
                    + eps + ", weight decay " + weightDecay);
        }
        for (Parameter p : parameters) {
            if (!p.trainable()) {
                throw new IllegalArgumentException(p.name() + " is frozen: AdamW only takes trainable parameters");
            }
            firstMoments.add(Tensor.zeros(p.value().precision(), p.value().shape()));
            secondMoments.add(Tensor.zeros(p.value().precision(), p.value().shape()));
        }
        this.parameters = List.copyOf(parameters);
        this.beta1 = beta1;
        this.beta2 = beta2;
        this.eps = eps;
        this.weightDecay = weightDecay;
    }

    /** PyTorch's defaults (β 0.9/0.999, ε 1e-8) without weight decay. */
    public static AdamW withoutWeightDecay(List<Parameter> parameters) {
        return new AdamW(parameters, 0.9, 0.999, 1e-8, 0.0);
    }

    /** One update with learning rate {@code lr} from the current gradients. */
    public void step(double lr) {
        if (!(lr >= 0) || Double.isInfinite(lr)) {
            throw new IllegalArgumentException("learning rate must be finite and >= 0, got " + lr);
        }
        step++;
        double correction1 = 1.0 - StrictMath.pow(beta1, step);
        double correction2 = 1.0 - StrictMath.pow(beta2, step);
        for (int i = 0; i < parameters.size(); i++) {
            Parameter p = parameters.get(i);
            Tensor w = p.value();
            Tensor g = p.grad();
            Tensor m = firstMoments.get(i);
            Tensor v = secondMoments.get(i);
            for (int j = 0; j < w.size(); j++) {
                double gj = g.get(j);
                if (!Double.isFinite(gj)) {
                    throw new IllegalStateException("gradient of " + p.name() + "[" + j + "] is " + gj);
                }
                double mj = beta1 * m.get(j) + (1.0 - beta1) * gj;
                double vj = beta2 * v.get(j) + (1.0 - beta2) * gj * gj;
                m.set(j, mj);
                v.set(j, vj);
                double wj = w.get(j) * (1.0 - lr * weightDecay);
                double update = (m.get(j) / correction1) / (Math.sqrt(v.get(j) / correction2) + eps);
                w.set(j, wj - lr * update);
            }
        }
    }

    public int steps() {
        return step;
    }

    /**
     * Scales all gradients by min(1, maxNorm / (‖g‖ + 1e-6)) (PyTorch's clip_grad_norm_) and returns ‖g‖, the
     * global L2 norm before clipping, summed in parameter order.
     */
    public static double clipGlobalNorm(List<Parameter> parameters, double maxNorm) {
        if (!(maxNorm > 0)) {
            throw new IllegalArgumentException("max norm must be positive, got " + maxNorm);
        }
        double sumSq = 0.0;
        for (Parameter p : parameters) {
            Tensor g = p.grad();
            for (int j = 0; j < g.size(); j++) {
                sumSq += g.get(j) * g.get(j);
            }
        }
        double norm = Math.sqrt(sumSq);
        if (!Double.isFinite(norm)) {
            throw new IllegalStateException("gradient norm is " + norm);
        }
        double factor = maxNorm / (norm + 1e-6);
        if (factor < 1.0) {
            for (Parameter p : parameters) {
                Tensor g = p.grad();
                for (int j = 0; j < g.size(); j++) {
                    g.set(j, g.get(j) * factor);
                }
            }
        }
        return norm;
    }
}
