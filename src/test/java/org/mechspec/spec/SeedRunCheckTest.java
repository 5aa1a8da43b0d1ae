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
    void aFailedCheckLeadsWithItsFailingFigureAndNamesItselfTheSeedTheBackendAndEveryFigure() {
        SeedRun run = new SeedRun(KERNELS, "attention_fp64_flash_rule", 43, CpuBackend.INSTANCE, null);
        run.metric("attention_fp64_max_error", 2.5e-13).metric("attention_fp64_bound", 1e-13);
        assertThatThrownBy(() -> run.check(false)).isInstanceOf(AssertionError.class).hasMessage(
                "attention_fp64_max_error = 2.500e-13 > 1.000e-13 — kernels/attention_fp64_flash_rule does not hold on seed 43 (cpu): "
                        + "{attention_fp64_max_error=2.5E-13, attention_fp64_bound=1.0E-13}");
        assertThatCode(() -> run.check(true)).doesNotThrowAnyException();
        assertThat(run.metrics()).containsKeys("attention_fp64_max_error", "attention_fp64_bound");
    }

    @Test
    void aBareCheckJudgesTheManifestsFiguresAndNamesEachThatFails() {
        SeedRun held = new SeedRun(KERNELS, "attention_fp64_flash_rule", 42, CpuBackend.INSTANCE, null);
        held.metric("attention_fp64_max_error", 1e-14).metric("attention_fp64_bound", 1e-13);
        assertThatCode(held::check).doesNotThrowAnyException();

        SeedRun broken = new SeedRun(KERNELS, "attention_fp64_flash_rule", 43, CpuBackend.INSTANCE, null);
        broken.metric("attention_fp64_max_error", 2.5e-13).metric("attention_fp64_bound", 1e-13);
        assertThatThrownBy(broken::check).isInstanceOf(AssertionError.class).hasMessage(
                "attention_fp64_max_error = 2.500e-13 > 1.000e-13 — kernels/attention_fp64_flash_rule does not hold on seed 43 (cpu)");

        SeedRun unrecorded = new SeedRun(KERNELS, "attention_fp64_flash_rule", 44, CpuBackend.INSTANCE, null);
        unrecorded.metric("attention_fp64_max_error", 1e-14);
        assertThatThrownBy(unrecorded::check).isInstanceOf(AssertionError.class)
                .hasMessageStartingWith("attention_fp64_max_error = 1.000e-14 ≤ (a metric of the bound was not recorded) — ");

        SeedRun noFigures = new SeedRun(KERNELS, "rng_pinned_test_vector", 42, CpuBackend.INSTANCE, null);
        assertThatThrownBy(noFigures::check).isInstanceOf(ManifestException.class).hasMessageContaining("declares no figures");
    }

    /** A protocol's result record, named like the manifest's metrics where it holds one. */
    record Measured(double attentionFp64MaxError, long attentionFp64Bound, double[] intermediate) {
    }

    record NothingMeasured(double somethingElse) {
    }

    @Test
    void aResultRecordIsRecordedByItsComponentsNamedLikeDeclaredMetrics() {
        SeedRun run = new SeedRun(KERNELS, "attention_fp64_flash_rule", 42, CpuBackend.INSTANCE, null);
        run.metrics(new Measured(0.5, 3, new double[2]));
        assertThat(run.metrics()).containsOnly(java.util.Map.entry("attention_fp64_max_error", 0.5), java.util.Map.entry("attention_fp64_bound", 3L));
        assertThatThrownBy(() -> run.metrics(new NothingMeasured(1))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("NothingMeasured has no component named like a metric of kernels");
    }

    @Test
    void aPropertyHalfReadsItsThresholdFromTheManifest() {
        assertThatThrownBy(() -> new PropertyRun(KERNELS, "rng_pinned_test_vector").threshold())
                .isInstanceOf(ManifestException.class).hasMessageContaining("check 'rng_pinned_test_vector' declares no 'threshold'");
    }
}
