package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.Arrays;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.Rng;
import org.quicktheories.core.Gen;

/**
 * Attention inputs for property halves, in the regimes real implementations get wrong (FlashAttention's and PyTorch's
 * test grids): ordinary logits; logits of large magnitude (to about ±1e3, which overflows {@code exp} without the max
 * shift in fp64 and fp32 alike); every logit of a row shifted far up or far down (a row whose keys are all "masked" by
 * a bias of −1e4 is still defined: its softmax is that of the remaining noise); a random set of keys masked by −1e4;
 * exact ties (every key of a head equal, or a zero query: uniform weights). Shapes: token counts at and around every
 * tile, chunk, group and warp boundary mechspec's kernels have (1, 2, 15–17, 31–33, 63–65, 127–129, 255–257, 511–513,
 * 1023–1025, 6015–6017 where the fp64 kernel's one-row buffer ended, and past the largest seeded case, 7001), head
 * and value dims from 1 to 256 around the same boundaries (a quarter of the draws square, D = Tk), GQA ratios 1–8,
 * Tq ≠ Tk, causal or not, with or without bias.
 * Shrinking moves towards the ordinary regime and the smallest sizes.
 */
public final class AttentionRegimes {
    /** Key counts: the boundaries of tiles (16, 32, 64, 128), chunks and warps, the old one-row buffer, past 7001. */
    static final int[] KEYS = {1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1023,
            1024, 1025, 6015, 6016, 6017, 7001, 7002, 7003};
    static final int[] QUERIES = {1, 2, 3, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65};
    static final int[] DIMS = {1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 80, 96, 127, 128, 129, 255, 256};
    /** Multiply-adds per example (oracle plus naive twin on the CPU): larger shapes give up query rows, then heads. */
    public static final long BUDGET = 6_000_000;

    private AttentionRegimes() {
    }

    /** What the logits and keys look like. */
    public enum Regime {
        ORDINARY("ordinary logits: q, k, v ~ N(0, 1), bias ~ N(0, 2)"),
        LARGE_LOGITS("logits of magnitude up to ~1e3: q, k ~ N(0, 30²), a few 'sink' keys with bias +500"),
        ROW_SHIFTED_UP("every logit of a row shifted by +800 (bias): exp overflows without the max shift"),
        ROW_MASKED("every key of a row masked by bias −1e4 (plus noise): defined, exp underflows without the max shift"),
        SOME_KEYS_MASKED("a random half of the keys masked by bias −1e4, the rest ordinary"),
        TIES("exact ties: every key of a KV head equal, and some query rows zero (uniform weights)");

        public final String description;

        Regime(String description) {
            this.description = description;
        }
    }

    /** One attention problem in fp64; {@code shape().causal()} and a null bias as drawn. */
    public record Case(Regime regime, AttentionShape shape, double[] q, double[] k, double[] v, double[] bias) {
        @Override
        public String toString() {
            AttentionShape s = shape;
            return regime + " B=" + s.batch() + " Hq=" + s.queryHeads() + " Hkv=" + s.kvHeads() + " Tq=" + s.queryLen() + " Tk=" + s.keyLen()
                    + " D=" + s.headDim() + " Dv=" + s.valueDim() + " causal=" + s.causal() + " bias=" + (bias != null)
                    + String.format("; max |logit| %.4g", maxAbsLogit());
        }

        /** The largest |logit| a visible (query, key) pair has: what the regime reached. */
        public double maxAbsLogit() {
            return logitMagnitudes(this, false);
        }
    }

    private record Sizes(Regime regime, int keys, int queries, int dim, int valueDim) {
    }

    private record Layout(int kvHeads, int group, boolean causal, boolean bias, long seed) {
    }

    /** Every regime and shape above; a property that takes it sees each regime about equally often. */
    public static Gen<Case> cases() {
        return cases(BUDGET);
    }

    /** As {@link #cases()}, within {@code budget} multiply-adds per example (a slower backend: the emulated driver). */
    public static Gen<Case> cases(long budget) {
        Gen<Sizes> sizes = integers().between(0, Regime.values().length - 1).zip(integers().between(0, KEYS.length - 1),
                integers().between(0, QUERIES.length - 1), integers().between(0, DIMS.length - 1), integers().between(0, DIMS.length - 1),
                (r, tk, tq, d, dv) -> new Sizes(Regime.values()[r], KEYS[tk], QUERIES[tq], DIMS[d], DIMS[dv]));
        Gen<Layout> layout = integers().between(1, 3).zip(integers().between(1, 8), booleans().all(), booleans().all(), longs().all(),
                Layout::new);
        return sizes.zip(layout, (z, l) -> build(z, l, budget)).describedAs(Case::toString);
    }

    static Case build(Sizes z, Layout l, long budget) {
        int tk = z.keys();
        int tq = l.causal() ? Math.min(z.queries(), tk) : z.queries();
        int hkv = l.kvHeads();
        int hq = hkv * l.group();
        long perQueryRow = (long) tk * (((l.seed() & 3) == 0 && tk <= 256 ? tk : z.dim()) + z.valueDim());
        // Within budget: fewer query rows first, then fewer KV heads (the GQA ratio is kept).
        while ((long) hq * tq * perQueryRow > budget && tq > 1) {
            tq = Math.max(1, tq / 2);
        }
        while ((long) hq * tq * perQueryRow > budget && hkv > 1) {
            hkv--;
            hq = hkv * l.group();
        }
        boolean withBias = l.bias() || z.regime() != Regime.ORDINARY && z.regime() != Regime.TIES;
        // A quarter of the draws with at most 256 keys are square (D = Tk): a layout that reads k transposed is
        // invisible on any other shape.
        int dim = (l.seed() & 3) == 0 && tk <= 256 ? tk : z.dim();
        AttentionShape s = AttentionShape.of(1, hq, hkv, tq, tk, dim, z.valueDim(), l.causal());
        Rng r = new Rng(l.seed());
        double qkStd = z.regime() == Regime.LARGE_LOGITS ? 30 : 1;
        double[] q = r.normals((int) s.queryElements(), 0, qkStd);
        double[] k = r.normals((int) s.keyElements(), 0, qkStd);
        double[] v = r.normals((int) s.valueElements(), 0, 1);
        double[] bias = withBias ? r.normals((int) s.biasElements(), 0, 2) : null;
        switch (z.regime()) {
            case LARGE_LOGITS -> {
                for (int j = 0; j < bias.length; j += 7) {
                    bias[j] += 500;
                }
            }
            case ROW_SHIFTED_UP -> Arrays.setAll(bias, j -> bias[j] + 800);
            case ROW_MASKED -> Arrays.setAll(bias, j -> bias[j] - 1e4);
            case SOME_KEYS_MASKED -> {
                for (int j = 0; j < bias.length; j++) {
                    bias[j] = r.uniform() < 0.5 ? -1e4 : bias[j];
                }
            }
            case TIES -> {
                int d = s.headDim();
                for (int row = 0; row < s.kvHeads() * tk; row++) {
                    System.arraycopy(k, (row / tk) * tk * d, k, row * d, d); // every key of the head equals its first
                }
                for (int row = 0; row < hq * tq; row += 2) {
                    Arrays.fill(q, row * d, (row + 1) * d, 0.0); // and every other query row is zero
                }
                if (bias != null) {
                    Arrays.fill(bias, 0.0);
                }
            }
            default -> {
            }
        }
        return new Case(z.regime(), s, q, k, v, bias);
    }

    /**
     * A bound on |out − exact| for an attention computed in a precision of unit roundoff {@code u} from these inputs,
     * in any order, by any correct method (blocked online softmax, another accumulation order, q scaled first):
     * <ul>
     * <li>each logit scale·q·k + bias carries at most γ(D+2)·(scale·Σ|q_c·k_c| + |bias|) of rounding (the dot product,
     * the scale, the bias add), and a logit error of E moves each softmax weight by at most a factor e^{±2E}, so the
     * output by at most (e^{2E} − 1)·max|v|;</li>
     * <li>exp, the normalizer's sum, an online softmax's rescales (one per key at worst) and the p·v sum add at most
     * γ(4·Tk + 16)·max(1, max|v|).</li>
     * </ul>
     * First-order worst-case bounds: a correct implementation stays far inside them, and a missing key, a wrong head, a wrong scale, a
     * lower precision or a non-finite value lands far outside them. The fp64 oracle's own error is bounded by the same
     * formula at fp64's u, so a comparison with it adds both.
     */
    public static double errorBound(Case c, double u) {
        return errorBound(c.shape(), c.q(), c.k(), c.v(), c.bias(), u, 0);
    }

    /**
     * As {@link #errorBound(Case, double)}, for inputs the computation may itself reconstruct to within
     * {@code inputSlack}·max|k| (keys) and {@code inputSlack}·max|v| (values) per element, as a kernel that dequantizes
     * a packed cache in its own order does: the logits move by at most inputSlack·scale·‖q‖₁·max|k| more, the output by
     * inputSlack·max|v| more.
     */
    public static double errorBound(AttentionShape s, double[] q, double[] k, double[] v, double[] bias, double u, double inputSlack) {
        double maxK = maxAbs(k);
        double maxV = maxAbs(v);
        double maxQ1 = 0;
        for (int row = 0; row < s.queryElements() / s.headDim(); row++) {
            double n1 = 0;
            for (int x = 0; x < s.headDim(); x++) {
                n1 += Math.abs(q[row * s.headDim() + x]);
            }
            maxQ1 = Math.max(maxQ1, n1);
        }
        double logitError = gamma(s.headDim() + 2, u) * logitMagnitudes(s, q, k, bias, true) + inputSlack * s.scale() * maxQ1 * maxK;
        return Math.expm1(2 * logitError) * maxV + gamma(4L * s.keyLen() + 16, u) * Math.max(1, maxV) + inputSlack * maxV;
    }

    /**
     * Every element of {@code out} finite and within {@code bound} of {@code oracle}: the figure (the largest error,
     * infinite where an element is not finite) is recorded, and a failure's message leads with it, then the case.
     */
    public static void judgeWithinBound(String figure, double[] out, double[] oracle, double bound, Object c) {
        double maxError = 0;
        int nonFinite = 0;
        int worst = -1;
        for (int i = 0; i < out.length; i++) {
            if (!Double.isFinite(out[i])) {
                nonFinite++;
            } else if (Math.abs(out[i] - oracle[i]) > maxError) {
                maxError = Math.abs(out[i] - oracle[i]);
                worst = i;
            }
        }
        Stress.figure(figure, nonFinite > 0 ? Double.POSITIVE_INFINITY : maxError, "<=", bound, () -> c);
        assertThat(nonFinite).as("%s: %d non-finite output elements (%s)", figure, nonFinite, c).isZero();
        assertThat(maxError).as("%s = %.3e > %.3e at output element %d (%s)", figure, maxError, bound, worst, c).isLessThanOrEqualTo(bound);
    }

    /** The largest |scale·q·k + bias| over visible (query, key) pairs: what a case's logits reached. */
    public static double maxAbsLogit(AttentionShape s, double[] q, double[] k, double[] bias) {
        return logitMagnitudes(s, q, k, bias, false);
    }

    private static double maxAbs(double[] x) {
        double m = 0;
        for (double e : x) {
            m = Math.max(m, Math.abs(e));
        }
        return m;
    }

    private static double gamma(long n, double u) {
        return n * u / (1 - n * u);
    }

    /**
     * Over visible (query, key) pairs: the largest scale·Σ|q_c·k_c| + |bias| ({@code absolute}, for the rounding
     * bound) or the largest |scale·q·k + bias|.
     */
    private static double logitMagnitudes(Case c, boolean absolute) {
        return logitMagnitudes(c.shape(), c.q(), c.k(), c.bias(), absolute);
    }

    private static double logitMagnitudes(AttentionShape s, double[] q, double[] k, double[] biases, boolean absolute) {
        int d = s.headDim();
        int group = s.queryHeads() / s.kvHeads();
        double max = 0;
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.queryHeads(); h++) {
                int kvBase = (b * s.kvHeads() + h / group) * s.keyLen();
                for (int i = 0; i < s.queryLen(); i++) {
                    int qOff = ((b * s.queryHeads() + h) * s.queryLen() + i) * d;
                    for (int j = 0; j <= s.lastVisibleKey(i); j++) {
                        int kOff = (kvBase + j) * d;
                        double dot = 0;
                        for (int x = 0; x < d; x++) {
                            double p = q[qOff + x] * k[kOff + x];
                            dot += absolute ? Math.abs(p) : p;
                        }
                        double bias = biases == null ? 0 : biases[kvBase + j];
                        max = Math.max(max, absolute ? s.scale() * dot + Math.abs(bias) : Math.abs(s.scale() * dot + bias));
                    }
                }
            }
        }
        return max;
    }
}
