package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The helpers behind pn-mix's figures on cases small enough to work out by hand: the KL, MSE and cosine
 * accumulator, the quantized key byte budget and the online-window count.
 */
@Tag("pn-mix")
class HandCheckedFiguresTest {
    private static final double LN3 = StrictMath.log(3);

    /** A few fp64 roundings on O(1) terms: 16u·(1 + |expected|), u = 2^−53. */
    private static org.assertj.core.data.Offset<Double> roundings(double expected) {
        return within(16 * 0x1.0p-53 * (1 + Math.abs(expected)));
    }

    @Test
    void klOfUniformAgainstThreeToOne() {
        // p = softmax(0, 0) = (1/2, 1/2); q = softmax(ln 3, 0) = (3/4, 1/4).
        // KL(p‖q) = ½·ln((1/2)/(3/4)) + ½·ln((1/2)/(1/4)) = ½·ln(2/3) + ½·ln 2 = ½·ln(4/3) ≈ 0.143841.
        // Read at offset 2 of longer rows, so the offset and the length count; logits shifted by 5 change nothing.
        double[] ref = {9, -9, 0, 0, 7};
        double[] quant = {-4, 4, LN3 + 5, 5, -7};
        double want = 0.5 * StrictMath.log(4.0 / 3.0);
        assertThat(AttentionErrors.kl(ref, quant, 2, 2)).isCloseTo(want, roundings(want));
        // The other direction is another number: KL(q‖p) = ¾·ln(3/2) + ¼·ln(1/2) ≈ 0.130812, so swapped arguments show.
        double reverse = 0.75 * StrictMath.log(1.5) + 0.25 * StrictMath.log(0.5);
        assertThat(AttentionErrors.kl(quant, ref, 2, 2)).isCloseTo(reverse, roundings(reverse));
        assertThat(Math.abs(want - reverse)).isGreaterThan(0.01);
        assertThat(AttentionErrors.kl(ref, ref, 0, 5)).as("KL(p‖p)").isCloseTo(0.0, roundings(0));
    }

    @Test
    void meansOverRowsAndDims() {
        AttentionErrors e = new AttentionErrors(2);
        // Row 1: reference output (1, 0), quantized (0, 1): squared error 1 + 1 = 2, cosine 0; KL ½·ln(4/3) as above.
        e.add(new double[] {0, 0}, new double[] {LN3, 0}, 0, 2, new double[] {1, 0}, new double[] {0, 1}, 0, 0, 0);
        // Row 2 (at offset 1): reference (3, 4), quantized (6, 8): squared error 9 + 16 = 25, cosine 50/(5·10) = 1; KL 0.
        e.add(new double[] {99, 0.5, 0.5}, new double[] {-99, 2, 2}, 1, 2, new double[] {7, 3, 4}, new double[] {7, 6, 8}, 1, 1, 0);
        assertThat(e.rows()).isEqualTo(2);
        // MSE averages over rows × dims: (2 + 25)/(2·2) = 6.75 (not 27/2); cosine over rows: (0 + 1)/2 = 0.5. Exact in fp64.
        assertThat(e.outputMse()).isEqualTo(6.75);
        assertThat(e.meanCosine()).isEqualTo(0.5);
        double want = 0.25 * StrictMath.log(4.0 / 3.0);
        assertThat(e.meanKl()).isCloseTo(want, roundings(want));
    }

    @Test
    void anAllZeroOutputRowIsNamed() {
        AttentionErrors e = new AttentionErrors(2);
        assertThatThrownBy(() -> e.add(new double[] {0}, new double[] {0}, 0, 1, new double[] {1, 1}, new double[] {0, 0}, 0, 383, 5))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("query 383, head 5 is all zero");
    }

    @Test
    void quantizedKeyBytesOfThePinnedProtocol() {
        PnMixConfig c = PnMixConfig.pinned();
        // 448 tokens: 32 sink, (448 − 32)/128 = 3 whole residuals = 3 groups. Per group and KV head, mixed keys:
        // 16 channels × ⌈128·3/8⌉ = 48 B + 16 × ⌈128·1/8⌉ = 16 B + 32 × 4 B scale/zero = 768 + 256 + 128 = 1152 B;
        // uniform 2-bit: 32 × 32 B + 128 B = 1152 B. 3 groups × 2 heads × 1152 = 6912 either way.
        assertThat(ConfigCounts.quantizedKeyBytesBudget(c, 448, 3, 1, 16)).isEqualTo(6912);
        assertThat(ConfigCounts.quantizedKeyBytesBudget(c, 448, 2, 2, 0)).isEqualTo(6912);
        // 415 tokens: (415 − 32)/128 = 2 groups → 4608; 31 tokens: all sink → 0.
        assertThat(ConfigCounts.quantizedKeyBytesBudget(c, 415, 3, 1, 16)).isEqualTo(4608);
        assertThat(ConfigCounts.quantizedKeyBytesBudget(c, 31, 3, 1, 16)).isZero();
    }

    @Test
    void unchangedWindowOfThePinnedProtocol() {
        PnMixConfig c = PnMixConfig.pinned();
        // Final residual start 32 + 3·128 = 416. Query t (384..447) sees 0..t; at its call the residual starts at 288
        // while t + 1 < 416 (t ≤ 414: 31 queries saw tokens later quantized) and at 416 from t = 415 (33 queries).
        assertThat(ConfigCounts.residualStart(c, 415)).isEqualTo(288);
        assertThat(ConfigCounts.residualStart(c, 416)).isEqualTo(416);
        assertThat(ConfigCounts.residualStart(c, 20)).isEqualTo(20);
        assertThat(ConfigCounts.unchangedWindowQueries(c)).isEqualTo(33);
    }

    @Test
    void quantizedKeyBytesWhenTheSinkIsAsLongAsAGroup() {
        // Sink 4, groups (and residual) of 4, d = 8, one KV head. 12 tokens: residual start 4 + 8 = 12, so (12 − 4)/4 = 2
        // groups (not (12 + 4)/4 = 4). Per group: 4 channels × ⌈4·3/8⌉ = 2 B + 4 × ⌈4·1/8⌉ = 1 B + 8 × 4 B = 44 B.
        PnMixConfig c = PnMixFixtures.small(2, 1, 8, 4, 4, 8, 4, 3, 1, 2);
        assertThat(ConfigCounts.quantizedKeyBytesBudget(c, 12, 3, 1, 4)).isEqualTo(2 * 44);
    }
}
