package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;

/**
 * Byte figures and the peak of the streaming cache, against the byte budget written out by hand for one KV head
 * of 4 dims (4 channels, fp16 row 8 bytes), 2 sinks, groups of 4, keys 3/3/1/1 bits, values 2 bits.
 */
class StreamingCacheTest {
    private final PnMixConfig config = PnMixFixtures.small(2, 1, 4, 2, 4, 12, 0, 3, 1, 2);
    private final PairMask mask = PairMask.of(1, 2, new boolean[] {true, false}); // 1 byte
    private final int[] keyBits = {3, 3, 1, 1};
    private final double[] rows = PnMixFixtures.halfRows(new Rng(3), 12, 4, 1.0);

    // Budget: a token row is 4 channels × 2 bytes; sink and residual tokens hold a key row and a value row.
    private static final int ROW = 4 * 2;
    private static final int MASK = 1;
    private static final int SINKS = 2 * 2 * ROW;
    // A group of 4 tokens: key streams ⌈4·3/8⌉ + ⌈4·3/8⌉ + ⌈4·1/8⌉ + ⌈4·1/8⌉ = 6 bytes + 4 channels × 4 bytes of
    // scale/zero; values 4 tokens × ⌈4·2/8⌉ = 4 bytes + 4 token groups × 4 bytes.
    private static final int GROUP_KEYS = 6 + 16;
    private static final int GROUP_VALUES = 4 + 16;
    // While a group is quantized the two fp64 staging arrays (4 tokens × 4 channels × 8 bytes each) are live.
    private static final int STAGING = 2 * 4 * 4 * 8;

    private StreamingCache cache() {
        return new StreamingCache(config, new CpuPackedCacheOps(), keyBits, mask.bytes());
    }

    private void append(StreamingCache c, int tokens) {
        for (int t = 0; t < tokens; t++) {
            c.append(Projections.row(rows, 4, t), Projections.row(rows, 4, 11 - t));
        }
    }

    @Test
    void keyWidthsMustCoverEveryChannel() {
        assertThatThrownBy(() -> new StreamingCache(config, new CpuPackedCacheOps(), new int[] {3, 3, 1}, mask.bytes()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key bit widths: 3 given, 4 channels");
    }

    @Test
    void theEmptyCacheHoldsTheMask() {
        StreamingCache c = cache();
        assertThat(c.peakBytes()).isEqualTo(MASK);
        assertThat(c.keyBytes()).isEqualTo(MASK);
    }

    @Test
    void thePeakFollowsSinkAndResidualAppends() {
        StreamingCache c = cache();
        append(c, 2);
        assertThat(c.peakBytes()).isEqualTo(MASK + SINKS);
        append(c, 3);
        assertThat(c.residualTokens()).isEqualTo(3);
        assertThat(c.peakBytes()).isEqualTo(MASK + SINKS + 3 * 2 * ROW);
    }

    @Test
    void aFlushPeaksWithTheFullResidualTheNewGroupAndTheStagingArrays() {
        StreamingCache c = cache();
        append(c, 6);
        assertThat(c.quantizedTokens()).isEqualTo(4);
        assertThat(c.residualTokens()).isZero();
        assertThat(c.keyBytes()).isEqualTo(MASK + SINKS / 2 + GROUP_KEYS);
        assertThat(c.valueBytes()).isEqualTo(SINKS / 2 + GROUP_VALUES);
        assertThat(c.peakBytes()).isEqualTo(MASK + SINKS + 4 * 2 * ROW + GROUP_KEYS + GROUP_VALUES + STAGING);
    }
}
