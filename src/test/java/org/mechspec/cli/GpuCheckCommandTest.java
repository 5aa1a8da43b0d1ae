package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.compute.DeviceProbe;

/**
 * {@code mechspec gpu-check} end to end on the emulated driver, over two fixture papers and the real bench: the
 * estimate comes first, each step's record, each paper's device work, one tarball; and the budget stops a step and
 * names it.
 */
@Tag("cuda")
@Tag("cli")
class GpuCheckCommandTest {
    @TempDir
    Path dir;
    private List<String> jvm;

    @BeforeEach
    void fixturesAndTheEmulator() throws Exception {
        assumeThat(DeviceProbe.unavailableReason()).as("no CUDA driver in this JVM").isNull();
        assumeThat(DeviceProbe.device().emulated()).as("a real GPU: run gpu-check itself").isTrue();
        Path contracts = Files.createDirectories(dir.resolve("contracts"));
        Files.writeString(contracts.resolve("cudaok.json"), CudaFaultFixtureContracts.OK_MANIFEST);
        Files.writeString(contracts.resolve("clifixture.json"), RunFixtureContracts.MANIFEST.replace("[42, 43]", "[42]"));
        Path reports = Files.createDirectories(dir.resolve("reports"));
        Files.createDirectories(reports.resolve(GpuCheckCommand.BASIS).getParent());
        Files.writeString(reports.resolve(GpuCheckCommand.BASIS), """
                {"papers": {"cudaok": {"process_seconds": 12.5, "device_ms": 2500, "kernel_launches": 2000,
                                       "bytes_to_device": 5000000000, "bytes_from_device": 0}}}
                """);
        jvm = List.of("-Dmechspec.contracts.dir=" + contracts, "-Dmechspec.reports.dir=" + reports);
    }

    @Test
    void runsTheContractsAndTheBenchAndLeavesOneTarball() throws Exception {
        ChildMain r = ChildMain.run(dir, 8, GpuCheckWithFixtures.class.getName(), jvm, "--backend", "cuda-emulated", "--out", "check");
        assertThat(r.code()).as(r.out()).isZero();
        String out = r.out();
        // host 12.5 - 2.5 = 10 s, 2000 launches at 0.5 ms = 1 s, 5 GB at 5 GB/s = 1 s, bench 90 s: 102 s.
        assertThat(out).contains("[gpu-check] estimated duration: 1.7 min: contracts 12 s (host work 10 s from the emulated"
                + " rehearsal, 2,000 launches at 0.5 ms, 5000.0 MB copied at 5 GB/s), bench 90 s");
        assertThat(out.indexOf("estimated duration")).as("the estimate comes first").isLessThan(out.indexOf("[gpu-check] contracts"));
        assertThat(out).contains("(emulated: a rehearsal, never GPU evidence)", "EMULATED: figures are meaningless",
                "every step passed");
        JsonNode record = new ObjectMapper().readTree(dir.resolve("check").resolve(GpuCheckCommand.RECORD).toFile());
        assertThat(record.at("/contracts/failed").asLong()).isZero();
        assertThat(record.at("/contracts/passed").asLong()).isPositive();
        assertThat(record.at("/papers/cudaok/kernel_launches").asLong()).as(record.toString()).isPositive();
        assertThat(record.at("/papers/cudaok/bytes_to_device").asLong()).isPositive();
        assertThat(record.at("/papers/clifixture/kernel_launches").asLong()).as("a paper that launches nothing").isZero();
        assertThat(record.at("/bench/exit").asInt()).isZero();
        assertThat(dir.resolve("check/run").resolve(GpuReceipt.FILE)).as("the emulator earns no receipt").doesNotExist();
        Process tar = new ProcessBuilder("tar", "-tzf", dir.resolve("check.tar.gz").toString()).redirectErrorStream(true).start();
        String listing = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(tar.waitFor()).isZero();
        assertThat(listing).contains("check/gpu-check.json", "check/run/reports/cudaok.cuda-emulated.json", "check/bench/bench.cuda-emulated.json");
    }

    @Test
    void theBudgetStopsWhatStillRunsAndNamesIt() throws Exception {
        // A third fixture paper runs until it is stopped, so the 6-second budget ends a running step on any machine.
        Files.writeString(dir.resolve("contracts/cliwait.json"), WaitingFixtureContracts.MANIFEST);
        ChildMain r = ChildMain.run(dir, 8, GpuCheckWithFixtures.class.getName(), jvm, "--backend", "cuda-emulated", "--out", "check",
                "--budget-minutes", "0.1");
        assertThat(r.code()).as(r.out()).isEqualTo(1);
        assertThat(r.out()).containsPattern("\\[gpu-check] contracts: stopped at the budget \\(0\\.1 min\\) after \\d")
                .contains("[gpu-check] bench: not started, the budget is spent").contains("contracts: ").contains("(stopped at the budget)");
        assertThat(dir.resolve("check.tar.gz")).as("what there is still goes into the tarball").exists();
    }
}
