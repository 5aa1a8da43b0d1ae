package org.mechspec.oal;

import org.mechspec.model.AttentionBlock;
import org.mechspec.model.HeadLayout;
import org.mechspec.model.Precision;
import org.mechspec.model.Tensor;

/**
 * Central finite differences of an attention block (the converted one, or a broken one) against its explicit backward, fp64, for the linear functional
 * loss = Σ_i w_i·out_i (so ∂loss/∂out = w is fixed and no probe sits at a minimum): every {@code stride}-th element of
 * q, k and v is perturbed by ±h. Error: max|numeric − analytic| / max|analytic| over the probed elements.
 */
final class BlockGradientCheck {
    private BlockGradientCheck() {
    }

    /** The MSE's direction at the current point: w = out − softmax output. */
    static double[] mseDirection(AttentionBlock block, LayerSamples s) {
        double[] out = forward(block, layout(s), tensor(s.q()), tensor(s.k()), tensor(s.v())).toDoubles();
        for (int i = 0; i < out.length; i++) {
            out[i] -= s.softmax()[i];
        }
        return out;
    }

    static double relativeError(AttentionBlock block, LayerSamples s, double[] weights, int stride, double h) {
        HeadLayout layout = layout(s);
        Tensor q = tensor(s.q());
        Tensor k = tensor(s.k());
        Tensor v = tensor(s.v());
        Tensor out = Tensor.zeros(Precision.FP64, s.q().length);
        var gradient = block.forward(layout, q, k, v, out);
        Tensor dq = Tensor.zeros(Precision.FP64, s.q().length);
        Tensor dk = Tensor.zeros(Precision.FP64, s.k().length);
        Tensor dv = Tensor.zeros(Precision.FP64, s.v().length);
        gradient.accumulate(tensor(weights), dq, dk, dv);
        double maxDiff = 0.0;
        double maxAnalytic = 0.0;
        Tensor[] inputs = {q, k, v};
        Tensor[] grads = {dq, dk, dv};
        for (int which = 0; which < 3; which++) {
            Tensor x = inputs[which];
            for (int i = which; i < x.size(); i += stride) {
                double original = x.get(i);
                x.set(i, original + h);
                double plus = dot(weights, forward(block, layout, q, k, v));
                x.set(i, original - h);
                double minus = dot(weights, forward(block, layout, q, k, v));
                x.set(i, original);
                double numeric = (plus - minus) / (2 * h);
                maxDiff = Math.max(maxDiff, Math.abs(numeric - grads[which].get(i)));
                maxAnalytic = Math.max(maxAnalytic, Math.abs(grads[which].get(i)));
            }
        }
        return maxDiff / Math.max(maxAnalytic, 1e-300);
    }

    private static HeadLayout layout(LayerSamples s) {
        return new HeadLayout(s.blocks(), s.seqLen(), s.heads(), s.kvHeads(), s.headDim());
    }

    private static Tensor tensor(double[] x) {
        return Tensor.of(Precision.FP64, x, x.length);
    }

    private static Tensor forward(AttentionBlock block, HeadLayout layout, Tensor q, Tensor k, Tensor v) {
        Tensor out = Tensor.zeros(Precision.FP64, q.size());
        block.forward(layout, q, k, v, out);
        return out;
    }

    private static double dot(double[] w, Tensor out) {
        double sum = 0.0;
        for (int i = 0; i < w.length; i++) {
            sum += w[i] * out.get(i);
        }
        return sum;
    }
}
