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
 * GPU-runner conditions shown with the emulated driver in child JVMs: a driver older than the kernels, an
 * EXCLUSIVE_PROCESS device that admits one process at a time, and a device of another size (multiprocessor count and
 * L2 cache, which the bench sizes its work from).
 */
@Tag("cuda")
@Tag("emulator-process")
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

    @Test
    void theMultiprocessorCountAndTheL2SizeAreTheEnvironmentsOrFourAndFourMebibytes() throws Exception {
        ChildJvm.Result h200 = ChildJvm.run(ChildJvm.emulated(Map.of("MECHSPEC_EMU_SM_COUNT", "132",
                "MECHSPEC_EMU_L2_BYTES", "52428800")), DeviceSize.class.getName());
        assertThat(h200.exit()).as(h200.output()).isZero();
        assertThat(h200.output()).contains("multiprocessors 132, L2 52428800 bytes");
        ChildJvm.Result defaults = ChildJvm.run(ChildJvm.emulated(Map.of("MECHSPEC_EMU_SM_COUNT", "many",
                "MECHSPEC_EMU_L2_BYTES", "")), DeviceSize.class.getName());
        assertThat(defaults.exit()).as(defaults.output()).isZero();
        assertThat(defaults.output()).contains("ignoring MECHSPEC_EMU_SM_COUNT=many", "multiprocessors 4, L2 4194304 bytes");
    }

    /** Prints the device's multiprocessor count and L2 cache size as the backend reads them. */
    public static final class DeviceSize {
        public static void main(String[] args) {
            CudaBackend cuda = CudaBackend.get();
            System.out.println("multiprocessors " + cuda.attribute(16) + ", L2 " + cuda.attribute(38) + " bytes");
        }
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
