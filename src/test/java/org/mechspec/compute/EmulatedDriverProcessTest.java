package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GPU-runner conditions shown with the emulated driver in child JVMs: a driver older than the kernels, and an
 * EXCLUSIVE_PROCESS device that admits one process at a time.
 */
@Tag("cuda")
@Tag("platform")
class EmulatedDriverProcessTest {
    @TempDir
    Path dir;

    @BeforeEach
    void needsTheEmulator() {
        assumeThat(ChildJvm.emulator()).as("the emulated driver was not built (no g++)").isNotNull();
        assumeThat(KernelImages.built()).as("nvcc was not found at build time").isTrue();
    }

    @Test
    void aDriverOlderThanTheToolkitRunsTheShippedSass() throws Exception {
        ChildJvm.Result r = ChildJvm.run(ChildJvm.emulated(Map.of("MECHSPEC_EMU_DRIVER_VERSION", "12040")),
                DeviceGate.class.getName(), "cuda");
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("driver for CUDA 12.4", "sm_90 SASS");
    }

    @Test
    void aDriverThatWouldHaveToJitNewerPtxIsOneLineNamingBothVersions() throws Exception {
        // Compute capability 11.0: no SASS of that major ships, so the driver must JIT the PTX (ISA of nvcc 13).
        ChildJvm.Result r = ChildJvm.run(ChildJvm.emulated(Map.of("MECHSPEC_EMU_DRIVER_VERSION", "12040",
                "MECHSPEC_EMU_CC", "11.0")), DeviceGate.class.getName(), "cuda");
        assertThat(r.exit()).as(r.output()).isEqualTo(1);
        String line = r.output().lines().filter(l -> l.startsWith("mechspec:")).findFirst().orElse(r.output());
        assertThat(line).contains("CUDA 12.4", "nvcc " + KernelImages.nvccRelease(), "UNSUPPORTED_PTX_VERSION", "r580");
    }

    @Test
    void theSameDriverAtTheKernelsVersionIsUsable() throws Exception {
        ChildJvm.Result r = ChildJvm.run(ChildJvm.emulated(Map.of()), DeviceGate.class.getName(), "cuda-emulated");
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output()).contains("CUDA backend: mechspec CUDA emulator", "compute capability 9.0", "sm_90 SASS");
    }

    @Test
    void theDeviceGateLeavesNoContextForTheTestJvmToTripOver() throws Exception {
        Map<String, String> exclusive = ChildJvm.emulated(Map.of("MECHSPEC_EMU_COMPUTE_MODE", "exclusive-process",
                "MECHSPEC_EMU_LOCK", dir.resolve("device.lock").toString()));
        ChildJvm.Result afterGate = ChildJvm.run(exclusive, SecondProcess.class.getName(), "gate");
        assertThat(afterGate.exit()).as(afterGate.output()).isZero();
        // Control: a process that keeps a context (as the gate once did) does lock the second one out.
        ChildJvm.Result afterBackend = ChildJvm.run(exclusive, SecondProcess.class.getName(), "backend");
        assertThat(afterBackend.exit()).as(afterBackend.output()).isEqualTo(1);
        assertThat(afterBackend.output()).contains("EXCLUSIVE_PROCESS");
    }

    /**
     * Does what its argument says in this JVM ("gate": the build's device gate; "backend": take the CUDA backend
     * and keep it), then runs the device gate in a second JVM while this one is alive; exits with its status.
     */
    public static final class SecondProcess {
        public static void main(String[] args) throws Exception {
            if (args[0].equals("gate")) {
                DeviceGate.main(new String[] {"cuda"});
            } else {
                CudaBackend.get();
            }
            ChildJvm.Result second = ChildJvm.run(Map.of(), DeviceGate.class.getName(), "cuda");
            System.out.println(second.output());
            System.exit(second.exit());
        }
    }
}
