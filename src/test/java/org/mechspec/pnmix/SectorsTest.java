package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The sector count on shapes small enough to count by hand. */
@Tag("pn-mix")
class SectorsTest {
    @Test
    void aSectorIsCountedOnceHoweverOftenItIsRead() {
        assertThat(new Sectors().touch(0, 4).touch(4, 4).touch(0, 32).count()).isEqualTo(1);
        assertThat(new Sectors().touch(0, 33).count()).isEqualTo(2);
        assertThat(new Sectors().touch(30, 4).count()).as("4 bytes across a boundary").isEqualTo(2);
        assertThat(new Sectors().touch(64, 0).count()).isZero();
    }

    @Test
    void metadataReadAtAStrideCostsASectorPerRead() {
        // One KV head's 4-byte scale and zero in each token's row of 8 heads (32 bytes): 10 tokens, 40 bytes used,
        // 10 sectors = 320 bytes moved.
        Sectors oneHead = new Sectors().touchStrided(4, 4, 32, 10);
        assertThat(oneHead.count()).isEqualTo(10);
        assertThat(oneHead.bytes()).isEqualTo(320);
        // The other heads read the rest of the same sectors: nothing new.
        for (int h = 0; h < 8; h++) {
            oneHead.touchStrided(4L * h, 4, 32, 10);
        }
        assertThat(oneHead.count()).isEqualTo(10);
        // Packed tightly, the same 40 bytes take 2 sectors.
        assertThat(new Sectors().touchStrided(0, 4, 4, 10).count()).isEqualTo(2);
    }
}
