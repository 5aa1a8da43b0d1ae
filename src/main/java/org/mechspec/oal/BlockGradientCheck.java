package org.mechspec.oal;

import org.mechspec.model.HeadLayout;
import org.mechspec.model.Precision;
import org.mechspec.model.Tensor;

/**
 * Central finite differences of the converted block against its explicit backward, fp64: loss = mean (out − target)²,
 * every {@code stride}-th element of q, k and v perturbed by ±h. Error: max|numeric − analytic| / max|analytic|
 * over the probed elements.
 */
final class BlockGradientCheck {
    private BlockGradientCheck() {
    }

    static double relativeError(ConvertedAttention block, LayerSamples s, int stride, double h) {
        HeadLayout layout = new HeadLayout(s.blocks(), s.seqLen(), s.heads(), s.kvHeads(), s.headDim());
        Tensor q = Tensor.of(Precision.FP64, s.q(), s.q().length);
        Tensor k = Tensor.of(Precision.FP64, s.k(), s.k().length);
        Tensor v = Tensor.of(Precision.FP64, s.v(), s.v().length);
        Tensor out = Tensor.zeros(Precision.FP64, s.q().length);
        var gradient = block.forward(layout, q, k, v, out);
        Tensor dOut = Tensor.zeros(Precision.FP64, s.q().length);
        for (int i = 0; i < dOut.size(); i++) {
            dOut.set(i, 2.0 * (out.get(i) - s.softmax()[i]) / dOut.size());
        }
        Tensor dq = Tensor.zeros(Precision.FP64, s.q().length);
        Tensor dk = Tensor.zeros(Precision.FP64, s.k().length);
        Tensor dv = Tensor.zeros(Precision.FP64, s.v().length);
        gradient.accumulate(dOut, dq, dk, dv);
        double maxDiff = 0.0;
        double maxAnalytic = 0.0;
        Tensor[] inputs = {q, k, v};
        Tensor[] grads = {dq, dk, dv};
        for (int which = 0; which < 3; which++) {
            Tensor x = inputs[which];
            for (int i = which; i < x.size(); i += stride) {
                double original = x.get(i);
                x.set(i, original + h);
                double plus = loss(block, layout, q, k, v, s.softmax());
                x.set(i, original - h);
                double minus = loss(block, layout, q, k, v, s.softmax());
                x.set(i, original);
                double numeric = (plus - minus) / (2 * h);
                maxDiff = Math.max(maxDiff, Math.abs(numeric - grads[which].get(i)));
                maxAnalytic = Math.max(maxAnalytic, Math.abs(grads[which].get(i)));
            }
        }
        return maxDiff / Math.max(maxAnalytic, 1e-300);
    }

    private static double loss(ConvertedAttention block, HeadLayout layout, Tensor q, Tensor k, Tensor v, double[] target) {
        Tensor out = Tensor.zeros(Precision.FP64, q.size());
        block.forward(layout, q, k, v, out);
        double sum = 0.0;
        for (int i = 0; i < out.size(); i++) {
            double d = out.get(i) - target[i];
            sum += d * d;
        }
        return sum / out.size();
    }
}
