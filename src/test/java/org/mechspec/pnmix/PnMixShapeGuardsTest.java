package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.OneBitLevels;

/**
 * Shapes that do not fit are refused, each on its own: a pair mask of another pair count than the head has, a
 * missing layout or 1-bit level rule, a random mask of the right head count but the wrong pair count, a head dim the
 * split-K decode kernel cannot hold.
 */
@Tag("pn-mix")
class PnMixShapeGuardsTest {

    @Test
    void channelBitsFollowThePairsOfEachHeadInBothLayouts() {
        // 2 heads × 4 pairs, high: head 0 pair 1, head 1 pairs 0 and 3.
        PairMask m = PnMixFixtures.mask(2, 4, 1, 4, 7);
        assertThat(m.channelBits(8, PairLayout.ADJACENT, 3, 1))
                .containsExactly(1, 1, 3, 3, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 3, 3);
        // Half-split: channel c is pair c mod 4.
        assertThat(m.channelBits(8, PairLayout.HALF_SPLIT, 3, 1))
                .containsExactly(1, 3, 1, 1, 1, 3, 1, 1, 3, 1, 1, 3, 3, 1, 1, 3);
    }

    @Test
    void aMaskOfAnotherPairCountThanTheHeadIsRejected() {
        PairMask m = PnMixFixtures.mask(2, 4, 1, 4, 7);
        // headDim 6 has 3 pairs: the mask's pair 3 would never be read.
        assertThatThrownBy(() -> m.channelBits(6, PairLayout.ADJACENT, 3, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a mask of 4 pairs per head does not fit headDim 6");
        // headDim 10 has 5 pairs: pair 4 of head 0 would read head 1's first flag.
        assertThatThrownBy(() -> m.channelBits(10, PairLayout.ADJACENT, 3, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("a mask of 4 pairs per head does not fit headDim 10");
    }

    @Test
    void aHeadDimBeyondTheDecodeKernelsIsRefusedBeforeAnyDeviceWork() {
        int d = CudaSplitKDecode.MAX_HEAD_DIM + 8;
        PackedKvCache cache = PackedKvCache.fp16(1, d, 1, new byte[2 * d], new byte[2 * d]);
        // No backend is needed: the shape is refused before the cache is uploaded.
        assertThatThrownBy(() -> CudaSplitKDecode.upload(null, cache, 1, true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("head dim 264 exceeds the split-K decode kernel's 256 (8 channels a lane, at most 32 lanes a key)");
    }

    private static PnMixConfig config(PairLayout layout, OneBitLevels levels) {
        return new PnMixConfig(new PnMixConfig.Model(256, 16, 2, 1, 4, 10000.0, layout),
                new PnMixConfig.CachePolicy(1, 2, 2, 0.5, 3, 1, 2, 128, levels), new PnMixConfig.Tokens(4, 0));
    }

    @Test
    void aConfigWithoutLayoutOrWithoutOneBitLevelsIsRejected() {
        assertThat(config(PairLayout.HALF_SPLIT, OneBitLevels.CONDITIONAL_MEANS).model().layout()).isEqualTo(PairLayout.HALF_SPLIT);
        assertThatThrownBy(() -> config(null, OneBitLevels.CONDITIONAL_MEANS)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("layout must be given");
        assertThatThrownBy(() -> config(PairLayout.ADJACENT, null)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("oneBitLevels must be given");
    }

    @Test
    void aRandomMaskOfTheRightHeadsButAnotherPairCountIsMaximallyWrong() {
        // The check's shape: 1 KV head, headDim 4 → 2 pairs, 1 high pair per head.
        PnMixConfig c = config(PairLayout.ADJACENT, OneBitLevels.CONDITIONAL_MEANS);
        assertThat(c.model().kvHeads()).isEqualTo(1);
        assertThat(c.model().pairs()).isEqualTo(2);
        // Same head count; 4 or 1 pairs. Comparing the first pairs' flags would give a small finite count.
        assertThat(StreamChecks.randomMaskMismatches(new PairMask[] {PnMixFixtures.mask(1, 4)}, 11, c)).isEqualTo(Long.MAX_VALUE);
        assertThat(StreamChecks.randomMaskMismatches(new PairMask[] {PnMixFixtures.mask(1, 1)}, 11, c)).isEqualTo(Long.MAX_VALUE);
        // A right-shaped mask is compared flag by flag: 2 flags, one of them high in the definition's mask.
        long bad = StreamChecks.randomMaskMismatches(new PairMask[] {PnMixFixtures.mask(1, 2)}, 11, c);
        assertThat(bad).isEqualTo(1);
    }
}
