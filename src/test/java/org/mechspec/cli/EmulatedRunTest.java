package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.compute.DeviceProbe;

/**
 * {@code mechspec run --backend cuda} where the driver is the project's emulator: the contracts run and pass, the
 * artifact is a cuda-emulated one, and no GPU receipt is written (the emulator is never GPU evidence).
 */
@Tag("cuda")
@Tag("cli")
class EmulatedRunTest {
    @TempDir
    Path dir;

    @Test
    void cudaOnTheEmulatorRunsTheContractsAndWritesNoReceipt() throws Exception {
        assumeThat(DeviceProbe.unavailableReason()).as("no CUDA driver in this JVM").isNull();
        assumeThat(DeviceProbe.device().emulated()).as("a real GPU").isTrue();
        // A JVM of its own (it inherits the emulator on LD_LIBRARY_PATH), as a user runs it, so the nested run's
        // Allure results stay out of this build's report.
        // C1 only: a short child run (cli/ChildMain says why).
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx2g",
                "-XX:TieredStopAtLevel=1", "-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("tmp")), "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "run", "--paper", "kernels", "--seeds", "42", "--backend", "cuda", "--out", dir.resolve("out").toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, java.util.concurrent.TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).containsPattern("contracts: [1-9][0-9]* passed, 0 failed").doesNotContain("GPU receipt");
        assertThat(dir.resolve("out/reports/kernels.cuda-emulated.json")).exists();
        assertThat(dir.resolve("out/reports/kernels.cuda.json")).doesNotExist();
        com.fasterxml.jackson.databind.JsonNode runtime = Artifacts.read(dir.resolve("out/reports/kernels.cuda-emulated.json"))
                .at("/mechspec/seeds/42/runtime");
        assertThat(runtime.path("cuda_kernel_launches").asLong()).as("the GPU's share, measured per seed: " + runtime).isPositive();
        assertThat(runtime.path("cuda_bytes_to_device").asLong()).as(runtime.toString()).isPositive();
        assertThat(runtime.path("cuda_bytes_from_device").asLong()).as(runtime.toString()).isPositive();
        assertThat(runtime.path("cuda_device_ms").isNumber()).as(runtime.toString()).isTrue();
        assertThat(Files.exists(dir.resolve("out").resolve(GpuReceipt.FILE))).isFalse();
    }

    @Test
    void aKernelFaultInOnePaperLeavesTheOtherPapersCudaContractsPassingAndIsNamed() throws Exception {
        assumeThat(DeviceProbe.unavailableReason()).as("no CUDA driver in this JVM").isNull();
        assumeThat(DeviceProbe.device().emulated()).as("a real GPU: the fault is the emulator's to provoke").isTrue();
        Path contracts = Files.createDirectories(dir.resolve("contracts"));
        Files.writeString(contracts.resolve("cudafault.json"), CudaFaultFixtureContracts.FAULT_MANIFEST);
        Files.writeString(contracts.resolve("cudaok.json"), CudaFaultFixtureContracts.OK_MANIFEST);
        ChildMain r = ChildMain.run(dir, RunWithFixtures.class.getName(), java.util.List.of("-Dmechspec.contracts.dir=" + contracts),
                "--paper", "cudafault", "--paper", "cudaok", "--backend", "cuda", "--out", "out", "--quiet");
        assertThat(r.code()).as(r.out()).isEqualTo(1);
        assertThat(r.out()).as("one process per paper").contains("each paper runs in a process of its own (cudafault, cudaok)")
                .containsPattern("FAILED .*aKernelFaults.*CUDA kernel emulator_selftest/selftest_out_of_bounds .*CUDA_ERROR_ILLEGAL_ADDRESS")
                .as("the later CUDA call in that process names the first fault and sends nothing")
                .containsPattern("FAILED .*cudaAfterTheFault.*CUDA is unusable in this process since CUDA kernel"
                        + " emulator_selftest/selftest_out_of_bounds .*failed: CUDA_ERROR_ILLEGAL_ADDRESS")
                .contains("contracts: 2 passed, 2 failed, 0 skipped");
        assertThat(Artifacts.read(dir.resolve("out/reports/cudaok.cuda-emulated.json")).at("/per_seed/0/checks").toString())
                .as("the other paper's CUDA contracts ran, in a fresh process, and passed")
                .isEqualTo("{\"rounds_on_cuda\":true,\"rounds_again\":true}");
        assertThat(dir.resolve("out/papers/cudaok/reports/cudaok.cuda-emulated.json")).as("each paper's own folder stays").exists();
        assertThat(Files.readString(dir.resolve("out/summary.md"))).contains("cudaok");
    }
}
