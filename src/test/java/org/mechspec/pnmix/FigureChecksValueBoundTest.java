package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.BitPacking;

/**
 * The online calls' bound uses, per call, max|v| over the values that call attended to: the stored ones below
 * residualStart(t + 1), the fp16 truth above. Here a token is still in the residual at the first call and
 * quantized (to a value far from its truth) by the second, so a bound that takes its value from the final cache
 * too early, or never, comes out different.
 *
 * <p>3 tokens, one head of d = 2, sink 1, groups (and residual) of 2 tokens, prefill 2 + decode 1. Call t = 1 (L = 2):
 * residualStart(2) = 1, token 0 as stored, token 1 the truth. Call t = 2 (L = 3): residualStart(3) = 3, all stored.
 * Every key is stored exactly, so both calls' logits, and so p and p_quant, are equal bit for bit (KL 0).
 */
@Tag("pn-mix")
class FigureChecksValueBoundTest {
    private static final double U = 0x1.0p-53;
    private static final double SQRT2 = StrictMath.sqrt(2);

    private final PnMixConfig c = PnMixFixtures.small(1, 1, 2, 1, 2, 2, 1, 2, 2, 2);

    private static final double[] Q = {0, 0, 1, 0, 0, 1};
    private static final double[] K = {1, 0, 0.5, 0.75, 0.75, -0.5};
    private static final double[] V = {1, 2, 0.25, -0.5, 1.5, 1};
    /** Values as the final cache stores them: token 1 dequantizes to (4, −0.5), far from its truth (0.25, −0.5). */
    private static final double[] VS = {1, 2, 4, -0.5, 1.5, 1};

    /** The cache with token 1's values dequantizing to (4, −0.5). */
    private static PackedKvCache cache() {
        return cache(1.5, 3);
    }

    /** Token 1's values: zero −0.5, the given scale, codes (code0, 0). */
    private static PackedKvCache cache(double token1Scale, int token1Code0) {
        // Keys of tokens 1, 2 per channel: ch 0 zero 0.5, scale 0.25, codes (0, 1) → 0.5, 0.75;
        // ch 1 zero −0.5, scale 1.25, codes (1, 0) → 0.75, −0.5. Exactly the truth.
        byte[] kc = new byte[2];
        BitPacking.put(kc, 0, 0, 2, 0);
        BitPacking.put(kc, 0, 1, 2, 1);
        BitPacking.put(kc, 1, 0, 2, 1);
        BitPacking.put(kc, 1, 1, 2, 0);
        PackedBlock keys = new PackedBlock(kc, PnMixFixtures.halfs(0.25, 0.5, 1.25, -0.5));
        // Values per token: token 1 zero −0.5, scale 1.5, codes (3, 0) → (4, −0.5) (by default); token 2 zero 1,
        // scale 0.5, codes (1, 0) → (1.5, 1).
        byte[] vc = new byte[2];
        BitPacking.put(vc, 0, 0, 2, token1Code0);
        BitPacking.put(vc, 0, 1, 2, 0);
        BitPacking.put(vc, 1, 0, 2, 1);
        BitPacking.put(vc, 1, 1, 2, 0);
        PackedBlock values = new PackedBlock(vc, PnMixFixtures.halfs(token1Scale, -0.5, 0.5, 1));
        PackedKvCache.Group g = new PackedKvCache.Group(keys, new int[] {2, 2}, values);
        return new PackedKvCache(1, 2, 1, PnMixFixtures.halfs(K[0], K[1]), PnMixFixtures.halfs(V[0], V[1]), 2, List.of(g), 2, 2, 0, new byte[0],
                new byte[0]);
    }

    private PnMixResult result(PackedKvCache cache) {
        return new PnMixResult(c, 3, new PnMixResult.Quality(0, 0, 0, 0, 0, 0, Double.NaN),
                new PnMixResult.Saliency(1, true, null, new byte[0], new int[0]), new PnMixResult.Calls(0, 0, 0, 0, 0, 0),
                new PnMixResult.Storage(0, 0, 0, 0, 0, 0, 0, 0), cache, 0);
    }

    private static Projections truth() {
        return new Projections(3, 1, 1, 2, Q, K, Q, K, Q, K, V);
    }

    private static double[] softmax(double... z) {
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

    /** ε = 2·max|v|·(Δl + (L+2)u), Δl = 2δz + 4(L+3)u(1 + max|z|), δz = 2(d+2)u·A; here A = max|z| (q ≥ 0, one term). */
    private static double eps(double vMax, int len, double zMax) {
        double dz = 2 * 4 * U * zMax;
        double dl = 2 * dz + 4 * (len + 3) * U * (1 + zMax);
        return 2 * vMax * (dl + (len + 2) * U);
    }

    @Test
    void eachCallsValueBoundUsesTheValuesItSawNotTheFinalCache() {
        // Call t = 1, q = (1, 0): z = (1, 0.5)/√2; o_ref = o_quant = p0·(1, 2) + p1·(0.25, −0.5) (token 1 is the
        // truth at this call), error 0. max|v| = 2: token 1's stored 4 is not yet in the cache.
        double[] p1 = softmax(1 / SQRT2, 0.5 / SQRT2);
        double[] o1 = {p1[0] * 1 + p1[1] * 0.25, p1[0] * 2 + p1[1] * -0.5};
        double eps1 = eps(2, 2, 1 / SQRT2);
        // Call t = 2, q = (0, 1): z = (0, 0.75, −0.5)/√2; o_ref uses token 1's truth, o_quant its stored (4, −0.5):
        // errors (3.75·p1, 0). max|v| = 4, the stored value.
        double[] p2 = softmax(0, 0.75 / SQRT2, -0.5 / SQRT2);
        double[] or2 = {p2[0] * 1 + p2[1] * 0.25 + p2[2] * 1.5, p2[0] * 2 + p2[1] * -0.5 + p2[2] * 1};
        double[] oq2 = {p2[0] * 1 + p2[1] * 4 + p2[2] * 1.5, or2[1]};
        double e = oq2[0] - or2[0];
        double eps2 = eps(4, 3, 0.75 / SQRT2);

        List<FigureChecks.Figure> f = FigureChecks.figures(result(cache()), truth());
        assertThat(f.get(3).name()).isEqualTo("attention_output_mse");
        assertThat(f.get(4).name()).isEqualTo("attention_output_cosine");
        assertThat(e).isCloseTo(3.75 * p2[1], within(1e-15));

        // Output MSE over 2 rows × 2 dims: Σ(4|e|ε + 4ε²) + 2(4 + 4)u·Σe², over 4.
        double sqBound = 2 * 4 * eps1 * eps1 + 4 * e * eps2 + 2 * 4 * eps2 * eps2;
        assertThat(f.get(3).definition()).isCloseTo(e * e / 4, within(1e-15 * e * e));
        assertThat(f.get(3).bound()).isCloseTo((sqBound + 16 * U * e * e) / 4, within(1e-12 * sqBound));

        // Cosine: per row 2√d·ε(1/‖o_quant‖ + 1/‖o_ref‖) + 4(d+2)u; mean over 2 rows plus 2·2u·Σ|cos|.
        double n1 = Math.hypot(o1[0], o1[1]);
        double nr2 = Math.hypot(or2[0], or2[1]);
        double nq2 = Math.hypot(oq2[0], oq2[1]);
        double cos2 = (oq2[0] * or2[0] + oq2[1] * or2[1]) / (nq2 * nr2);
        double cosBound = 2 * SQRT2 * eps1 * (2 / n1) + 16 * U + 2 * SQRT2 * eps2 * (1 / nq2 + 1 / nr2) + 16 * U;
        assertThat(f.get(4).definition()).isCloseTo((1 + cos2) / 2, within(1e-15));
        assertThat(f.get(4).bound()).isCloseTo((cosBound + 4 * U * (1 + cos2)) / 2, within(1e-12 * cosBound));
        // The first call's share of the cosine bound is not negligible: doubling its max|v| would show.
        assertThat(2 * SQRT2 * eps1 * (2 / n1)).isGreaterThan(0.1 * cosBound);
    }

    @Test
    void outputMseBoundKeepsItsSquaredRoundingTermWhereOutputsAgreeExactly() {
        // Token 1 stored as its truth: zero −0.5, scale 0.25, codes (3, 0) → (0.25, −0.5). Every stored value is the
        // truth, so both calls' outputs agree bit for bit (e = 0) and the bound is Σ 4ε² alone: a bound built as
        // 4|e|ε − 4ε² would be negative. max|v| = 2 in both calls.
        List<FigureChecks.Figure> f = FigureChecks.figures(result(cache(0.25, 3)), truth());
        double eps1 = eps(2, 2, 1 / SQRT2);
        double eps2 = eps(2, 3, 0.75 / SQRT2);
        assertThat(f.get(1).definition()).as("value_mse").isZero();
        assertThat(f.get(3).definition()).as("attention_output_mse").isZero();
        double sqBound = 2 * 4 * eps1 * eps1 + 2 * 4 * eps2 * eps2;
        assertThat(f.get(3).bound()).isPositive().isCloseTo(sqBound / 4, within(1e-12 * sqBound));
    }
}
