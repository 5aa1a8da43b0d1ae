package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The stored form of the pair mask: bit h·pairs + p, LSB-first, ⌈kvHeads·pairs/8⌉ bytes. */
class PairMaskTest {

    @Test
    void theFlagCountMustMatchTheShape() {
        assertThatThrownBy(() -> PairMask.of(2, 16, new boolean[31]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("mask needs 32 flags, got 31");
    }

    @Test
    void bytesAreTheFlagsRoundedUpToWholeBytes() {
        assertThat(PnMixFixtures.mask(2, 16).byteLength()).isEqualTo(4);
        assertThat(PnMixFixtures.mask(1, 3).byteLength()).isEqualTo(1);
        assertThat(PnMixFixtures.mask(3, 5).byteLength()).isEqualTo(2); // 15 flags
    }

    @Test
    void theNumberReadsFlagIAsBitI() {
        // flags 0, 9, 17, 31 → bytes 0x01, 0x02, 0x02, 0x80
        PairMask m = PnMixFixtures.mask(2, 16, 0, 9, 17, 31);
        assertThat(m.bytes()).containsExactly(0x01, 0x02, 0x02, 0x80);
        assertThat(m.asLong()).isEqualTo(0x80020201L);
        assertThat(m.toString()).isEqualTo("PairMask(0x80020201)");
        assertThat(m.hashCode()).isEqualTo(Arrays.hashCode(new byte[] {0x01, 0x02, 0x02, (byte) 0x80}));
        assertThat(m.high(1, 15)).isTrue();
        assertThat(m.high(1, 14)).isFalse();
    }

    @Test
    void equalityNeedsTheSameShapeAndFlags() {
        PairMask m = PnMixFixtures.mask(2, 16, 0, 9);
        assertThat(m).isEqualTo(PnMixFixtures.mask(2, 16, 0, 9));
        assertThat(m).isNotEqualTo(PnMixFixtures.mask(2, 16, 0, 10));
        assertThat(m).isNotEqualTo(PnMixFixtures.mask(1, 32, 0, 9)); // same bytes, another shape
        assertThat(m).isNotEqualTo(PnMixFixtures.mask(4, 8, 0, 9));
        assertThat(m.equals("PairMask(0x201)")).isFalse();
    }
}
