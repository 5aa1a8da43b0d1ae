package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.BitPacking;

/**
 * FigureChecks on a cache written by hand: 3 tokens, one head of d = 2, a sink token and two 1-token groups, so the
 * online calls are t = 1 and t = 2 over stored keys and values only. The figures and their bounds are worked out here
 * from the definitions and the bound formulas of FigureChecks' class comment.
 */
@Tag("pn-mix")
class FigureChecksTest {
    private static final double U = 0x1.0p-53;
    private static final double SQRT2 = StrictMath.sqrt(2);

    /** Sink 1, groups of 1, prefill 2 + decode 1: residualStart(len) = len, everything is stored as soon as it exists. */
    private final PnMixConfig c = PnMixFixtures.small(1, 1, 2, 1, 1, 2, 1, 2, 2, 2);

    // Truth and stored rows [token][channel]. Keys of tokens 1, 2 dequantize exactly to the truth; the sink key does not.
    private static final double[] Q = {0, 0, 0, 1, 1, 0};
    private static final double[] K = {1, 0, 0.5, 0.75, 0.75, -0.5};
    private static final double[] KS = {0.5, 2, 0.5, 0.75, 0.75, -0.5};
    private static final double[] V = {1, 2, 0.25, -0.5, 1.5, 1};
    private static final double[] VS = {1, 2, 0.5, -0.5, 2, 1};

    /** Keys: per channel (scale, zero, code); values: one group of both channels (scale, zero) and two codes. */
    private static PackedKvCache.Group group(double[] key0, double[] key1, double vScale, double vZero, int v0, int v1) {
        byte[] kc = new byte[2];
        BitPacking.put(kc, 0, 0, 2, (int) key0[2]);
        BitPacking.put(kc, 1, 0, 2, (int) key1[2]);
        byte[] km = PnMixFixtures.halfs(key0[0], key0[1], key1[0], key1[1]);
        byte[] vc = new byte[1];
        BitPacking.put(vc, 0, 0, 2, v0);
        BitPacking.put(vc, 0, 1, 2, v1);
        return new PackedKvCache.Group(new PackedBlock(kc, km), new int[] {2, 2}, new PackedBlock(vc, PnMixFixtures.halfs(vScale, vZero)));
    }

    private static PackedKvCache cache() {
        // Token 1 keys: −1 + 3·0.5 = 0.5, 0.5 + 1·0.25 = 0.75; values −1 + (3, 1)·0.5 = (0.5, −0.5).
        // Token 2 keys: 0.25 + 2·0.25 = 0.75, −0.5 + 0·0.5 = −0.5; values 0 + (2, 1)·1 = (2, 1).
        List<PackedKvCache.Group> groups = List.of(
                group(new double[] {0.5, -1, 3}, new double[] {0.25, 0.5, 1}, 0.5, -1, 3, 1),
                group(new double[] {0.25, 0.25, 2}, new double[] {0.5, -0.5, 0}, 1, 0, 2, 1));
        return new PackedKvCache(1, 2, 1, PnMixFixtures.halfs(KS[0], KS[1]), PnMixFixtures.halfs(VS[0], VS[1]), 1, groups, 2, 2, 0, new byte[0], new byte[0]);
    }

    private PnMixResult result(PackedKvCache cache, double reported) {
        return new PnMixResult(c, 3, new PnMixResult.Quality(reported, reported, reported, reported, reported, 0, Double.NaN),
                new PnMixResult.Saliency(1, true, null, new byte[0], new int[0]), new PnMixResult.Calls(0, 0, 0, 0, 0, 0),
                new PnMixResult.Storage(0, 0, 0, 0, 0, 0, 0, 0), cache, 0);
    }

    private Projections truth() {
        return new Projections(3, 1, 1, 2, Q, K, Q, K, Q, K, V);
    }

    private static org.assertj.core.data.Offset<Double> rel(double x) {
        return within(1e-12 * Math.abs(x));
    }

    /** Per-row sums: kl, |kl|, kl bound, squared error, its bound, cosine, |cosine|, its bound. */
    private static double[] expectedOnline() {
        double[] s = new double[8];
        for (int t = 1; t <= 2; t++) {
            int len = t + 1;
            double q0 = Q[2 * t];
            double q1 = Q[2 * t + 1];
            double[] zr = new double[len];
            double[] zq = new double[len];
            double a = 0;
            double m = 0;
            double vMax = 0;
            for (int j = 0; j < len; j++) {
                zr[j] = (q0 * K[2 * j] + q1 * K[2 * j + 1]) / SQRT2;
                zq[j] = (q0 * KS[2 * j] + q1 * KS[2 * j + 1]) / SQRT2;
                double ar = Math.abs(q0 * K[2 * j]) + Math.abs(q1 * K[2 * j + 1]);
                double aq = Math.abs(q0 * KS[2 * j]) + Math.abs(q1 * KS[2 * j + 1]);
                a = Math.max(a, Math.max(ar, aq) / SQRT2);
                m = Math.max(m, Math.max(Math.abs(zr[j]), Math.abs(zq[j])));
                for (int i = 0; i < 2; i++) {
                    vMax = Math.max(vMax, Math.max(Math.abs(V[2 * j + i]), Math.abs(VS[2 * j + i])));
                }
            }
            double[] p = softmax(zr);
            double[] pq = softmax(zq);
            double kl = 0;
            double spread = 0;
            double[] or = new double[2];
            double[] oq = new double[2];
            for (int j = 0; j < len; j++) {
                double diff = StrictMath.log(p[j]) - StrictMath.log(pq[j]);
                kl += p[j] * diff;
                spread += p[j] * Math.abs(diff);
                for (int i = 0; i < 2; i++) {
                    or[i] += p[j] * V[2 * j + i];
                    oq[i] += pq[j] * VS[2 * j + i];
                }
            }
            // δz = 2(d+2)u·A; Δl = 2δz + 4(L+3)u(1 + max|z|); ε = 2·max|v|·(Δl + (L+2)u).
            double dz = 2 * 4 * U * a;
            double dl = 2 * dz + 4 * (len + 3) * U * (1 + m);
            double eps = 2 * vMax * (dl + (len + 2) * U);
            s[0] += kl;
            s[1] += Math.abs(kl);
            s[2] += 2 * dl + 2 * (dl + (len + 1) * U) * spread;
            double na = Math.hypot(oq[0], oq[1]);
            double nb = Math.hypot(or[0], or[1]);
            for (int i = 0; i < 2; i++) {
                double e = oq[i] - or[i];
                s[3] += e * e;
                s[4] += 4 * Math.abs(e) * eps + 4 * eps * eps;
            }
            double cos = (oq[0] * or[0] + oq[1] * or[1]) / (na * nb);
            s[5] += cos;
            s[6] += Math.abs(cos);
            s[7] += 2 * SQRT2 * eps * (1 / na + 1 / nb) + 4 * 4 * U;
        }
        return s;
    }

    private static double[] softmax(double[] z) {
        double sum = 0;
        for (double v : z) {
            sum += StrictMath.exp(v);
        }
        double[] p = new double[z.length];
        for (int j = 0; j < z.length; j++) {
            p[j] = StrictMath.exp(z[j]) / sum;
        }
        return p;
    }

    private static void assertFigure(FigureChecks.Figure f, String name, double definition, double bound) {
        assertThat(f.name()).isEqualTo(name);
        assertThat(f.definition()).as("%s definition", name).isCloseTo(definition, within(1e-13 * Math.abs(definition) + 1e-300));
        assertThat(f.bound()).as("%s bound", name).isCloseTo(bound, rel(bound));
    }

    @Test
    void figuresAndBoundsOfAHandWrittenCache() {
        List<FigureChecks.Figure> f = FigureChecks.figures(result(cache(), 0.125), truth());
        assertThat(f).hasSize(5);
        // Key MSE: tokens 1, 2 dequantize exactly (e = 0); each element rounds within r = 2u(|zero| + |code·scale|):
        // r = 5u, 1.5u, 1.5u, 1u; bound = Σ r²/4 = 30.5u²/4.
        assertFigure(f.get(0), "key_mse", 0, 30.5 * U * U / 4);
        // Value MSE: errors (0.25, 0, 0.5, 0), sum 0.3125 over 4; r = 5u, 3u, 4u, 2u;
        // bound = (Σ(2|e|r + r²) + 2(4 + 4)u·sum)/4 = (2.5u + 4u + 54u² + 16u·0.3125)/4.
        assertFigure(f.get(1), "value_mse", 0.3125 / 4, (2.5 * U + 4 * U + 54 * U * U + 16 * U * 0.3125) / 4);
        double[] s = expectedOnline();
        assertThat(s[0]).as("the sink key moves the attention").isGreaterThan(0.01);
        // Means over 2 rows (× d = 2 for the output MSE), bounds plus 2(N + c)u of the sums.
        assertFigure(f.get(2), "attention_kl", s[0] / 2, (s[2] + 2 * 2 * U * s[1]) / 2);
        assertFigure(f.get(3), "attention_output_mse", s[3] / 4, (s[4] + 2 * (4 + 4) * U * s[3]) / 4);
        assertFigure(f.get(4), "attention_output_cosine", s[5] / 2, (s[7] + 2 * 2 * U * s[6]) / 2);
        assertThat(FigureChecks.maxOverBound(f)).isGreaterThan(1);
    }

    @Test
    void tokensTheCacheKeptInItsResidualAreReadFromThere() {
        // A cache that quantized nothing: keys and values of all 3 tokens in its fp16 residual, equal to the truth.
        PackedKvCache fp16 = PackedKvCache.fp16(1, 2, 3, PnMixFixtures.halfs(K), PnMixFixtures.halfs(V));
        List<FigureChecks.Figure> f = FigureChecks.figures(result(fp16, 0.0), truth());
        assertThat(f.get(0).definition()).as("key_mse").isZero();
        assertThat(f.get(1).definition()).as("value_mse").isZero();
        assertThat(f.get(2).definition()).as("attention_kl").isCloseTo(0.0, within(1e-15));
    }

    @Test
    void theExperimentAddsTheUniformAndTheRandomMeanFigures() {
        PnMixResult r = result(cache(), 0.125);
        PnMixExperiment e = new PnMixExperiment(1, "x", truth(), r, new PnMixResult[] {r, r, r}, r);
        List<FigureChecks.Figure> f = FigureChecks.figures(e);
        assertThat(f).hasSize(7);
        double[] s = expectedOnline();
        double kl = s[0] / 2;
        double bound = (s[2] + 2 * 2 * U * s[1]) / 2;
        assertFigure(f.get(5), "uniform_2bit_attention_kl", kl, bound);
        assertThat(f.get(5).mechanism()).isEqualTo(0.125);
        // Mean of 3 equal runs: the run's KL; bound (3·bound + 2(3 + 2)u·3·kl)/3.
        assertFigure(f.get(6), "random_mask_attention_kl_mean", kl, (3 * bound + 2 * 5 * U * 3 * kl) / 3);
        assertThat(f.get(6).mechanism()).isEqualTo(0.125);
    }

    @Test
    void aFigureExactlyAtItsBoundHolds() {
        assertThat(new FigureChecks.Figure("x", 1.5, 1.0, 0.5).holds()).isTrue();
        assertThat(new FigureChecks.Figure("x", Math.nextUp(1.5), 1.0, 0.5).holds()).isFalse();
        assertThat(FigureChecks.maxOverBound(List.of(new FigureChecks.Figure("a", 1.25, 1.0, 0.5),
                new FigureChecks.Figure("b", 1.0, 1.0, 0.0)))).isEqualTo(0.5);
    }
}
