package org.mechspec.oal;

import org.mechspec.compute.Rng;
import org.mechspec.model.HeadLayout;
import org.mechspec.model.Precision;
import org.mechspec.model.Qwen2Config;
import org.mechspec.model.Qwen2Model;
import org.mechspec.model.SoftmaxAttention;
import org.mechspec.model.Tensor;

/** Small random models, texts and layer samples for the property halves and the mutant tests. */
final class TinyOal {
    private TinyOal() {
    }

    /** 5 layers (so layer 4 exists), byte vocabulary, hidden 32, 2 query heads of dim 16 over 1 KV head. */
    static Qwen2Config config(int layers) {
        return new Qwen2Config(256, 32, 48, layers, 2, 1, 64, 10000.0, 1e-6, true);
    }

    static Qwen2Model model(long seed, int layers) {
        return Qwen2Model.initialized(config(layers), Precision.FP32, new Rng(seed), 0.2);
    }

    /** Printable ASCII with spaces, {@code bytes} long. */
    static byte[] text(long seed, int bytes) {
        Rng rng = new Rng(seed);
        byte[] out = new byte[bytes];
        for (int i = 0; i < bytes; i++) {
            double u = rng.uniform();
            out[i] = (byte) (u < 0.2 ? ' ' : 'a' + (int) (rng.uniform() * 26));
        }
        return out;
    }

    /** Random q, k, v (N(0, scale²)) and their exact causal softmax attention output as the target. */
    static LayerSamples samples(long seed, int blocks, int seqLen, int heads, int kvHeads, int headDim, double scale) {
        Rng rng = new Rng(seed);
        double[] q = rng.normals(blocks * seqLen * heads * headDim, 0, scale);
        double[] k = rng.normals(blocks * seqLen * kvHeads * headDim, 0, scale);
        double[] v = rng.normals(blocks * seqLen * kvHeads * headDim, 0, 1);
        HeadLayout layout = new HeadLayout(blocks, seqLen, heads, kvHeads, headDim);
        Tensor out = Tensor.zeros(Precision.FP64, q.length);
        new SoftmaxAttention().forward(layout, Tensor.of(Precision.FP64, q, q.length), Tensor.of(Precision.FP64, k, k.length),
                Tensor.of(Precision.FP64, v, v.length), out);
        return new LayerSamples(blocks, seqLen, heads, kvHeads, headDim, q, k, v, out.toDoubles());
    }

    /** Grouping of random contributions, then per head the Taylor factor plus N(0, noise²) on its lower triangle. */
    static double[][] factors(Rng rng, int heads, int groupCount, double noise) {
        int side = groupCount + 1;
        double[][] l = new double[heads][];
        for (int h = 0; h < heads; h++) {
            l[h] = Calibration.perturbed(QuadraticForm.taylorFactor(groupCount), side,
                    rng.normals(QuadraticForm.lowerEntries(side), 0, noise));
        }
        return l;
    }

    static int[] groups(Rng rng, int heads, int headDim) {
        double[] c = new double[heads * headDim];
        for (int i = 0; i < c.length; i++) {
            c[i] = rng.uniform();
        }
        return Grouping.assign(c, heads, headDim);
    }
}
