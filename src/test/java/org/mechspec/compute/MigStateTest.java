package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The bench's MIG state and when it withholds the fraction of the clock × bus-width peak. */
@Tag("cli")
class MigStateTest {
    @Test
    void aSliceIsToldByItsProfileInTheNameOrAMigUuid() {
        assertThat(MigState.of("NVIDIA A100-SXM4-40GB MIG 1g.5gb", null, false).state()).isEqualTo("yes");
        assertThat(MigState.of("NVIDIA H100 80GB HBM3 MIG 3g.40gb", "", false).state()).isEqualTo("yes");
        assertThat(MigState.of("NVIDIA H200", "MIG-4b1c2d3e-0000-1111-2222-333344445555", false).state()).isEqualTo("yes");
        assertThat(MigState.of("NVIDIA H200", "0", false).state()).isEqualTo("no");
        assertThat(MigState.of("NVIDIA H200", null, false).state()).isEqualTo("no");
        assertThat(MigState.of("NVIDIA MIGHTY 9000", null, false).state()).as("MIG as a word, not a prefix").isEqualTo("no");
        assertThat(MigState.of(" ", null, false).state()).isEqualTo("unknown");
        assertThat(MigState.of("mechspec CUDA emulator (CPU)", null, true).state()).isEqualTo("unknown");
    }

    @Test
    void thePeakFractionIsReportedOnlyOnAWholeGpu() {
        assertThat(MigState.of("NVIDIA H200", null, false).peakWithheld()).isNull();
        assertThat(MigState.of("NVIDIA A100-SXM4-40GB MIG 1g.5gb", null, false).peakWithheld()).contains("MIG slice");
        assertThat(MigState.of("mechspec CUDA emulator (CPU)", null, true).peakWithheld()).contains("cannot tell");
    }
}
