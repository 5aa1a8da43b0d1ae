package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The result's derived figures, on hand-made byte counts. */
class PnMixResultTest {

    /** A result whose only meaningful figures are the byte counts and the mask. */
    private static PnMixResult result(long keyBytes, long valueBytes, long heldBytes, PairMask mask) {
        return new PnMixResult(PnMixConfig.pinned(), 448, new PnMixResult.Quality(0.1, 0.2, 0.3, 0.4, 0.5, 0.0, 0.0),
                new PnMixResult.Saliency(1, true, mask, new byte[0], new int[0]),
                new PnMixResult.Calls(66, 0.0, 0.0, 0.0, 64, 0),
                new PnMixResult.Storage(keyBytes, valueBytes, heldBytes, 0, 384, 32, 32, 0), null, 0.0);
    }

    @Test
    void countingMoreThanIsHeldMeansATemporaryCopyWasIncluded() {
        assertThat(result(10, 5, 14, null).temporaryDequantizedCacheIncluded()).isTrue();
        assertThat(result(10, 5, 15, null).temporaryDequantizedCacheIncluded()).isFalse();
        assertThat(result(10, 5, 16, null).temporaryDequantizedCacheIncluded()).isFalse();
    }

    @Test
    void metricsNameEveryFigureAndMarkAMissingMask() {
        var m = result(10, 5, 15, null).metrics();
        assertThat(m).hasSize(22);
        assertThat(m).containsEntry("saliency_mask", -1L);
        assertThat(m).containsEntry("persistent_cache_bytes", 15L);
        assertThat(m).containsEntry("temporary_dequantized_cache_included", false);
        // 10 key bytes over 448 tokens × 64 channels
        assertThat(m).containsEntry("key_bits_per_element_including_sink_residual", 80.0 / (448.0 * 64));
        PairMask mask = PairMask.of(1, 4, new boolean[] {false, true, false, true});
        assertThat(result(10, 5, 15, mask).metrics()).containsEntry("saliency_mask", 0b1010L);
    }
}
