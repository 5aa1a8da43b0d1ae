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
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx2g",
                "-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("tmp")), "-cp", System.getProperty("java.class.path"),
                Main.class.getName(), "run", "--paper", "kernels", "--backend", "cuda", "--out", dir.resolve("out").toString())
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(5, java.util.concurrent.TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        assertThat(out).containsPattern("contracts: [1-9][0-9]* passed, 0 failed").doesNotContain("GPU receipt");
        assertThat(dir.resolve("out/reports/kernels.cuda-emulated.json")).exists();
        assertThat(dir.resolve("out/reports/kernels.cuda.json")).doesNotExist();
        assertThat(Files.exists(dir.resolve("out").resolve(GpuReceipt.FILE))).isFalse();
    }
}
