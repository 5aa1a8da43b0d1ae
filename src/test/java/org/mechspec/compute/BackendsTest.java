package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Which backends a contract gets. The GPU-only cases matter on a machine where a device answers (the emulated
 * CI run): a CPU-only run there used to hand GPU-only contracts no backend at all, and JUnit failed them.
 */
@Tag("cuda")
@Tag("platform")
class BackendsTest {
    private final String saved = System.getProperty("mechspec.backend");

    @AfterEach
    void restore() {
        if (saved == null) {
            System.clearProperty("mechspec.backend");
        } else {
            System.setProperty("mechspec.backend", saved);
        }
    }

    @Test
    void cpuRunSkipsGpuOnlyContractsWithAReasonWhetherOrNotADeviceAnswers() {
        System.setProperty("mechspec.backend", "cpu");
        List<Backend> gpuOnly = Backends.forContract(true);
        assertThat(gpuOnly).singleElement().isInstanceOf(UnavailableBackend.class);
        assertThat(((UnavailableBackend) gpuOnly.get(0)).reason()).contains("-Dmechspec.backend=cpu");
        assertThat(Backends.forContract(false)).containsExactly(CpuBackend.INSTANCE);
    }

    @Test
    void autoGivesGpuOnlyContractsTheDeviceOrASkipNeverNothing() {
        System.setProperty("mechspec.backend", "auto");
        List<Backend> gpuOnly = Backends.forContract(true);
        assertThat(gpuOnly).hasSize(1);
        if (DeviceProbe.unavailableReason() == null) {
            assertThat(gpuOnly.get(0)).isInstanceOf(CudaBackend.class);
            assertThat(Backends.forContract(false)).containsExactly(CpuBackend.INSTANCE, gpuOnly.get(0));
        } else {
            assertThat(gpuOnly.get(0)).isInstanceOf(UnavailableBackend.class);
            assertThat(Backends.forContract(false)).containsExactly(CpuBackend.INSTANCE);
        }
    }

    @Test
    void cudaEmulatedRefusesAnyDeviceButTheEmulator() {
        if (DeviceProbe.unavailableReason() != null) {
            assertThat(Backends.cudaUnavailableReason("cuda-emulated")).isEqualTo(DeviceProbe.unavailableReason());
            return;
        }
        String reason = Backends.cudaUnavailableReason("cuda-emulated");
        if (DeviceProbe.device().emulated()) {
            assertThat(reason).isNull();
            assertThat(CudaBackend.get().name()).isEqualTo("cuda-emulated");
        } else {
            assertThat(reason).contains("real one");
        }
    }

    @Test
    void unknownBackendIsRefusedWithTheChoices() {
        System.setProperty("mechspec.backend", "gpu");
        assertThatThrownBy(Backends::requested).hasMessageContaining("auto, cpu, cuda, cuda-emulated");
    }

    @Test
    void aKernelTheImageLacksIsNamedWithItsModule() {
        org.junit.jupiter.api.Assumptions.assumeTrue(DeviceProbe.unavailableReason() == null, "no CUDA driver in this JVM");
        assertThatThrownBy(() -> CudaBackend.get().function("attention", "no_such_kernel"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("CUDA kernel attention/no_such_kernel not found in attention.fatbin: CUDA_ERROR_NOT_FOUND");
    }
}
