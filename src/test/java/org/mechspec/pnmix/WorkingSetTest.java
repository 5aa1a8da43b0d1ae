package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The bench's rule: enough copies of a cache to hold twice the L2, and no more. */
@Tag("pn-mix")
class WorkingSetTest {
    private static final long MIB = 1 << 20;

    @Test
    void copiesFillTwiceTheL2() {
        WorkingSet s = WorkingSet.of(4 * MIB, 3 * MIB); // 8 MiB wanted: 2 copies hold 6, 3 hold 9
        assertThat(s.copies()).isEqualTo(3);
        assertThat(s.bytes()).isEqualTo(9 * MIB);
        assertThat(s.coversL2()).isTrue();
        assertThat(WorkingSet.of(50_000_000, 25_000_000).copies()).as("exactly twice").isEqualTo(4);
        assertThat(WorkingSet.of(50_000_000, 25_000_001).copies()).isEqualTo(4);
        assertThat(WorkingSet.of(50_000_000, 24_999_999).copies()).isEqualTo(5);
        assertThat(WorkingSet.of(60 * MIB, 18 * MIB).copies()).as("120 MiB wanted, 18 MiB a copy").isEqualTo(7);
    }

    @Test
    void aCacheOfTwiceTheL2OrMoreNeedsOneCopy() {
        assertThat(WorkingSet.of(50 * MIB, 512 * MIB).copies()).isEqualTo(1);
        assertThat(WorkingSet.of(50 * MIB, 100 * MIB).copies()).isEqualTo(1);
        assertThat(WorkingSet.of(50 * MIB, 100 * MIB - 1).copies()).isEqualTo(2);
    }

    @Test
    void anUnknownL2GivesOneCopyThatIsNotClaimedToCoverIt() {
        WorkingSet s = WorkingSet.of(-1, 3 * MIB);
        assertThat(s.copies()).isEqualTo(1);
        assertThat(s.coversL2()).isFalse();
        assertThatThrownBy(() -> WorkingSet.of(4 * MIB, 0)).isInstanceOf(IllegalArgumentException.class);
    }
}
