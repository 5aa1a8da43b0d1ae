package org.mechspec.oal;

import java.util.ArrayList;
import java.util.List;
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
        Tensor out = Tensor.zeros(Precision.FP64, s.q().length);
        var gradient = block.forward(layout, tensor(s.q()), tensor(s.k()), tensor(s.v()), out);
        Tensor dq = Tensor.zeros(Precision.FP64, s.q().length);
        Tensor dk = Tensor.zeros(Precision.FP64, s.k().length);
        Tensor dv = Tensor.zeros(Precision.FP64, s.v().length);
        gradient.accumulate(tensor(weights), dq, dk, dv);
        double[][] inputs = {s.q(), s.k(), s.v()};
        Tensor[] grads = {dq, dk, dv};
        List<int[]> probes = new ArrayList<>();
        for (int which = 0; which < 3; which++) {
            for (int i = which; i < inputs[which].length; i += stride) {
                probes.add(new int[] {which, i});
            }
        }
        double[] losses = perturbedLosses(block, layout, inputs, probes, weights, h);
        double maxDiff = 0.0;
        double maxAnalytic = 0.0;
        for (int p = 0; p < probes.size(); p++) {
            double numeric = (losses[2 * p] - losses[2 * p + 1]) / (2 * h);
            double analytic = grads[probes.get(p)[0]].get(probes.get(p)[1]);
            maxDiff = Math.max(maxDiff, Math.abs(numeric - analytic));
            maxAnalytic = Math.max(maxAnalytic, Math.abs(analytic));
        }
        return maxDiff / Math.max(maxAnalytic, 1e-300);
    }

    /** Elements per batched forward: bounds the copies' memory (16 MB of q, k and v). */
    private static final int BATCH_ELEMENTS = 1 << 21;

    /**
     * The loss at +h and at −h of each probe (element {@code probe[1]} of input {@code probe[0]}), in that order. The
     * perturbed copies go through the block as the blocks of one batched forward, which computes each block on its own
     * tokens: an outside implementation answers a few calls instead of two per probe.
     */
    private static double[] perturbedLosses(AttentionBlock block, HeadLayout layout, double[][] inputs, List<int[]> probes,
                                            double[] weights, double h) {
        int perCopy = inputs[0].length + inputs[1].length + inputs[2].length;
        int copiesPerCall = Math.max(1, BATCH_ELEMENTS / perCopy);
        double[] losses = new double[2 * probes.size()];
        for (int first = 0; first < losses.length; first += copiesPerCall) {
            int copies = Math.min(copiesPerCall, losses.length - first);
            double[][] batch = new double[3][];
            for (int which = 0; which < 3; which++) {
                int n = inputs[which].length;
                batch[which] = new double[copies * n];
                for (int c = 0; c < copies; c++) {
                    System.arraycopy(inputs[which], 0, batch[which], c * n, n);
                }
            }
            for (int c = 0; c < copies; c++) {
                int[] probe = probes.get((first + c) / 2);
                int at = c * inputs[probe[0]].length + probe[1];
                batch[probe[0]][at] += (first + c) % 2 == 0 ? h : -h;
            }
            HeadLayout batched = new HeadLayout(layout.batch() * copies, layout.seqLen(), layout.heads(), layout.kvHeads(),
                    layout.headDim());
            Tensor out = forward(block, batched, tensor(batch[0]), tensor(batch[1]), tensor(batch[2]));
            for (int c = 0; c < copies; c++) {
                double loss = 0.0;
                for (int i = 0; i < weights.length; i++) {
                    loss += weights[i] * out.get(c * weights.length + i);
                }
                losses[first + c] = loss;
            }
        }
        return losses;
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
}
