package org.mechspec.oal;

import org.mechspec.model.LayerActivations;
import org.mechspec.model.Tensor;

/**
 * The converted layer's post-RoPE queries and keys, values and softmax output (what o_proj reads) on a set of
 * blocks, widened to fp64; layouts token-major as in {@link QuadraticAttentionShape}. Non-finite activations are
 * rejected here, naming the tensor and element, before any statistic or fit can see them.
 */
record LayerSamples(int blocks, int seqLen, int heads, int kvHeads, int headDim, double[] q, double[] k, double[] v,
                    double[] softmax) {

    static LayerSamples of(LayerActivations a) {
        var layout = a.layout();
        return new LayerSamples(layout.batch(), layout.seqLen(), layout.heads(), layout.kvHeads(), layout.headDim(),
                finite("post-RoPE queries", a.queries()), finite("post-RoPE keys", a.keys()),
                finite("values", a.values()), finite("softmax attention output", a.attention()));
    }

    private static double[] finite(String what, Tensor t) {
        int bad = t.firstNonFinite();
        if (bad >= 0) {
            throw new IllegalStateException("non-finite activation in the converted layer: " + what + " element " + bad
                    + " is " + t.get(bad));
        }
        return t.toDoubles();
    }

    QuadraticAttentionShape shape(int groupCount) {
        return new QuadraticAttentionShape(blocks, seqLen, heads, kvHeads, headDim, groupCount);
    }

    int kvHeadOf(int head) {
        return head / (heads / kvHeads);
    }

    int queryOffset(int b, int t, int h) {
        return ((b * seqLen + t) * heads + h) * headDim;
    }

    int kvOffset(int b, int t, int g) {
        return ((b * seqLen + t) * kvHeads + g) * headDim;
    }

    /** The samples of block {@code b} alone. */
    LayerSamples block(int b) {
        int qn = seqLen * heads * headDim;
        int kn = seqLen * kvHeads * headDim;
        return new LayerSamples(1, seqLen, heads, kvHeads, headDim, slice(q, b * qn, qn), slice(k, b * kn, kn),
                slice(v, b * kn, kn), slice(softmax, b * qn, qn));
    }

    private static double[] slice(double[] x, int from, int n) {
        double[] out = new double[n];
        System.arraycopy(x, from, out, 0, n);
        return out;
    }
}
