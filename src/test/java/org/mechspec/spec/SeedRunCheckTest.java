package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CpuBackend;

/** run.check: recorded figures first, then one assertion whose failure says what was measured. */
@Tag("platform")
class SeedRunCheckTest {
    private static final Manifest KERNELS = ManifestLoader.load(Path.of("contracts/kernels.json"));

    @Test
    void aFailedCheckNamesItselfTheSeedTheBackendAndEveryFigure() {
        SeedRun run = new SeedRun(KERNELS, "attention_fp64_flash_rule", 43, CpuBackend.INSTANCE, null);
        run.metric("attention_fp64_max_error", 2.5e-13).metric("attention_fp64_bound", 1e-13);
        assertThatThrownBy(() -> run.check(false)).isInstanceOf(AssertionError.class).hasMessage(
                "kernels/attention_fp64_flash_rule does not hold on seed 43 (cpu): "
                        + "{attention_fp64_max_error=2.5E-13, attention_fp64_bound=1.0E-13}");
        assertThatCode(() -> run.check(true)).doesNotThrowAnyException();
        assertThat(run.metrics()).containsKeys("attention_fp64_max_error", "attention_fp64_bound");
    }

    @Test
    void aPropertyHalfReadsItsThresholdFromTheManifest() {
        assertThatThrownBy(() -> new PropertyRun(KERNELS, "rng_pinned_test_vector").threshold())
                .isInstanceOf(ManifestException.class).hasMessageContaining("check 'rng_pinned_test_vector' declares no 'threshold'");
    }
}
