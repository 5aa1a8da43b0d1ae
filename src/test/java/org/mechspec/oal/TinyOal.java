package org.mechspec.oal;

import org.mechspec.compute.Rng;
import org.mechspec.data.TokenBlocks;
import org.mechspec.model.Batch;
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
    /** Byte blocks of the protocol's length over {@link #text}. */
    static TokenBlocks blocks(long seed, int bytes) {
        return TokenBlocks.ofBytes(text(seed, bytes), OalProtocol.SEQUENCE_LENGTH);
    }

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

    /** One input of the recurrent/dense/oracle property: samples, a grouping and factors, all from {@code seed}. */
    record AgreementCase(LayerSamples samples, int[] groups, double[][] factors) {
    }

    static AgreementCase agreementCase(long seed, int seqLen, int dimChoice, int groupRatio) {
        int d = new int[] {3, 4, 8, 16, 32}[dimChoice];
        int kv = 1 + (int) Math.floorMod(seed, 2L);
        int heads = kv * groupRatio;
        LayerSamples s = samples(seed, 1 + (int) Math.floorMod(seed >> 3, 2L), seqLen, heads, kv, d, 0.8);
        Rng rng = new Rng(seed ^ 0x5DEECE66DL);
        int[] groups = groups(rng, heads, d);
        return new AgreementCase(s, groups, factors(rng, heads, Grouping.GROUPS, 0.1));
    }

    /**
     * Σ_e w_e·(L_e − c_e)² over L's lower triangle, with every c_e at least 1 from the start: farther than 10 Adam steps
     * of lr 0.05 can travel (Cauchy–Schwarz on the bias-corrected moments, β1²/β2 < 1, bounds each step by 1.044·lr for
     * t ≤ 10), so no gradient changes sign, every step moves every coordinate towards c_e and the loss must fall.
     */
    record FarQuadratic(int side, double[] center, double[] weights) implements CalibrationObjective {
        static FarQuadratic around(double[] start, int side, Rng rng) {
            double[] c = new double[side * side];
            double[] w = new double[side * side];
            for (int r = 0; r < side; r++) {
                for (int col = 0; col <= r; col++) {
                    int e = r * side + col;
                    double distance = 1.0 + 4.0 * rng.uniform(); // > 10 · 0.05 · 1.05
                    c[e] = start[e] + (rng.uniform() < 0.5 ? -distance : distance);
                    w[e] = StrictMath.pow(10.0, -3.0 + 6.0 * rng.uniform());
                }
            }
            return new FarQuadratic(side, c, w);
        }

        @Override
        public double evaluate(double[] l, double[] grad) {
            double loss = 0.0;
            for (int r = 0; r < side; r++) {
                for (int col = 0; col <= r; col++) {
                    int e = r * side + col;
                    double diff = l[e] - center[e];
                    loss += weights[e] * diff * diff;
                    if (grad != null) {
                        grad[e] = 2 * weights[e] * diff;
                    }
                }
            }
            return loss;
        }
    }

    /**
     * A matched LoRA adaptation of a tiny 5-layer model whose layer {@value OalProtocol#LAYER} is converted with random
     * groups and factors: 10 text blocks, blocks 2..9 adapt (the protocol's 8), blocks 0 and 1 are left for checks.
     */
    record Adaptation(MatchedLora.Adapted adapted, TokenBlocks blocks, int[] groups, double[][] factors) {
        static Adaptation of(long seed) {
            return of(seed, CpuGroupedQuadraticAttention.INSTANCE);
        }

        /** The same with the converted layer's attention from {@code ops} (a property half's backend). */
        static Adaptation of(long seed, GroupedQuadraticAttentionOps ops) {
            Rng rng = new Rng(seed);
            int[] groups = TinyOal.groups(rng, 2, 16);
            double[][] l = TinyOal.factors(rng, 2, Grouping.GROUPS, 0.3);
            TokenBlocks blocks = TokenBlocks.ofBytes(text(seed, 32 * 10), OalProtocol.SEQUENCE_LENGTH);
            Batch batch = Batch.nextToken(blocks.blocks(new int[] {2, 3, 4, 5, 6, 7, 8, 9}), OalProtocol.SEQUENCE_LENGTH);
            ConvertedAttention block = new ConvertedAttention(OalProtocol.LAYER, ops, groups, Grouping.GROUPS, l);
            MatchedLora.Adapted adapted = MatchedLora.adapt(model(seed, 5), OalProtocol.LAYER, block, batch, rng,
                    OalProtocol.LORA, OalProtocol.LORA_STEPS, OalProtocol.LORA_LEARNING_RATE);
            return new Adaptation(adapted, blocks, groups, l);
        }
    }

    /** A converted layer for the tiny model (2 heads of 16 dims), drawn from {@code rng}. */
    static ConvertedAttention convertedBlock(Rng rng) {
        return new ConvertedAttention(OalProtocol.LAYER, CpuGroupedQuadraticAttention.INSTANCE, groups(rng, 2, 16),
                Grouping.GROUPS, factors(rng, 2, Grouping.GROUPS, 0.3));
    }

    /** Two next-token blocks of the protocol's length, from synthetic text. */
    static Batch twoBlockBatch() {
        TokenBlocks blocks = TokenBlocks.ofBytes(text(3, 32 * 2), OalProtocol.SEQUENCE_LENGTH);
        return Batch.nextToken(blocks.blocks(new int[] {0, 1}), OalProtocol.SEQUENCE_LENGTH);
    }
}
