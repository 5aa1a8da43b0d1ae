package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The fatbins nvcc built into the jar, and the image the driver's rule picks for each compute capability. */
@Tag("platform")
class FatBinaryTest {
    @Test
    void kernelsShipSassForEachArchitectureSinceAmpereAndPtx() {
        assumeTrue(KernelImages.built(), "nvcc was not found at build time");
        for (String module : new String[] {"attention", "foldbias", "oal", "pnmix", "rounding"}) {
            FatBinary f = FatBinary.parse(KernelImages.read(module));
            assertThat(f.images()).as(module).contains(new FatBinary.Image(false, 80, ""), new FatBinary.Image(false, 86, ""),
                    new FatBinary.Image(false, 89, ""), new FatBinary.Image(false, 90, ""));
            assertThat(f.images()).as(module).anyMatch(i -> i.ptx() && i.sm() == 80);
        }
    }

    @Test
    void theDriversRuleSassOfTheSameMajorElsePtx() {
        assumeTrue(KernelImages.built(), "nvcc was not found at build time");
        FatBinary f = FatBinary.parse(KernelImages.read("rounding"));
        assertThat(f.imageFor(9, 0).describe()).isEqualTo("sm_90 SASS");
        assertThat(f.imageFor(8, 7).describe()).as("same major, lower minor").isEqualTo("sm_86 SASS");
        assertThat(f.imageFor(8, 0).describe()).isEqualTo("sm_80 SASS");
        assertThat(f.imageFor(11, 0).describe()).as("no SASS of major 11").startsWith("compute_80 PTX");
        assertThat(f.imageFor(7, 5)).as("older than every image").isNull();
    }

    @Test
    void anythingButAFatbinIsRefused() {
        assertThat(FatBinary.isFatBinary("// PTX".getBytes(java.nio.charset.StandardCharsets.US_ASCII))).isFalse();
    }
}
