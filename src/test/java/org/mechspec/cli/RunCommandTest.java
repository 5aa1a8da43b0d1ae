package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.compute.DeviceProbe;

/**
 * {@code mechspec run} in a child JVM, as a user runs it: relative paths against the working directory, artifacts
 * and Allure results in DIR, the summary line, exit 1 on a failed contract; two seed shards merge into the
 * committed reference artifact.
 */
@Tag("cli")
class RunCommandTest {
    @TempDir
    Path dir;

    private ChildMain fork(String mainClass, List<String> jvmOptions, String... args) throws IOException, InterruptedException {
        return ChildMain.run(dir, mainClass, jvmOptions, args);
    }

    @Test
    void seedShardsRunApartMergeIntoTheCommittedKernelsReference() throws Exception {
        ChildMain a = fork(Main.class.getName(), List.of(), "run", "--paper", "kernels", "--seeds", "42", "--backend", "cpu", "--out", "shard-a");
        assertThat(a.code()).as(a.out()).isZero();
        assertThat(a.out()).containsPattern("(?m)^contracts: [1-9]\\d* passed, 0 failed, \\d+ skipped$");
        assertThat(a.out()).containsPattern("(?m)^\\[mechspec] kernels \\w+ seed 42 \\(cpu\\) \\(\\d+\\.\\d s\\)$");
        Path shardA = dir.resolve("shard-a/reports/kernels.cpu.json");
        assertThat(shardA).exists();
        assertThat(Artifacts.names(dir.resolve("shard-a/allure-results"))).contains("environment.properties")
                .anyMatch(n -> n.endsWith("-result.json"));
        ChildMain b = fork(Main.class.getName(), List.of(), "run", "--paper", "kernels", "--seeds", "43,44", "--backend", "cpu", "--out", "shard-b",
                "--quiet");
        assertThat(b.code()).as(b.out()).isZero();
        assertThat(b.out()).doesNotContain("[mechspec] kernels rng_pinned_test_vector seed");
        Path merged = dir.resolve("kernels.cpu.json");
        Cli merge = Cli.run("merge", shardA.toString(), dir.resolve("shard-b/reports/kernels.cpu.json").toString(), "--out", merged.toString());
        assertThat(merge.code()).as(merge.toString()).isZero();
        Cli validate = Cli.run("validate", merged.toString(), shardA.toString());
        assertThat(validate.code()).as(validate.toString()).isZero();
        Cli diff = Cli.run("diff", merged.toString(), "reports/kernels.cpu.json");
        assertThat(diff.code()).as(diff.toString()).isZero();
    }

    @Test
    void failedContractExitsOneWithALineSayingWhatFailed() throws Exception {
        Path contracts = Files.createDirectories(dir.resolve("contracts"));
        Files.writeString(contracts.resolve("clifixture.json"), RunFixtureContracts.MANIFEST);
        ChildMain r = fork(RunWithFixtures.class.getName(), List.of("-Dmechspec.contracts.dir=" + contracts), "--paper", "clifixture",
                "--backend", "cpu", "--out", "out");
        assertThat(r.code()).as(r.out()).isEqualTo(1);
        assertThat(r.out()).contains("contracts: 3 passed, 1 failed, 0 skipped")
                .containsPattern("FAILED RunFixtureContracts > fails\\(SeedRun\\) > .*seed 43.*: \\[seed\\] Expecting actual: 43L? to be less than: 43");
        String artifact = Files.readString(dir.resolve("out/reports/clifixture.cpu.json"));
        assertThat(Artifacts.read(dir.resolve("out/reports/clifixture.cpu.json")).at("/per_seed/1/checks/fails").asBoolean()).as(artifact).isFalse();
    }

    @Test
    void badOptionsExitTwoWithOneLine() {
        Cli backend = Cli.run("run", "--backend", "tpu");
        assertThat(backend.code()).isEqualTo(2);
        assertThat(backend.err().strip()).isEqualTo("mechspec: --backend must be one of auto, cpu, cuda, cuda-emulated, got 'tpu' (see: mechspec run --help)");
        Cli seeds = Cli.run("run", "--seeds", "42;43");
        assertThat(seeds.code()).isEqualTo(2);
        assertThat(seeds.err()).hasLineCount(1).contains("--seeds must be a comma-separated list of integers, got '42;43'");
        Cli paper = Cli.run("run", "--paper", "no-such-paper");
        assertThat(paper.code()).isEqualTo(2);
        assertThat(paper.err()).hasLineCount(1).contains("unknown paper 'no-such-paper' (known: ").contains("kernels");
    }

    @Test
    void seedsNoSelectedPaperDeclaresAreRefusedUpFront() {
        Cli one = Cli.run("run", "--paper", "kernels", "--seeds", "99", "--out", dir.resolve("never").toString());
        assertThat(one.code()).as(one.toString()).isEqualTo(2);
        assertThat(one.err().strip()).isEqualTo("mechspec: --seeds 99 is not a manifest seed of kernels (kernels: 42, 43, 44)"
                + " (see: mechspec run --help)");
        Cli all = Cli.run("run", "--seeds", "42,99", "--out", dir.resolve("never").toString());
        assertThat(all.code()).as(all.toString()).isEqualTo(2);
        assertThat(all.err()).hasLineCount(1).contains("--seeds 99 is not a manifest seed of any selected paper (")
                .contains("kernels: 42, 43, 44").contains("fold-bias: 42, 43, 44");
        Cli huge = Cli.run("run", "--seeds", "99999999999999999999", "--out", dir.resolve("never").toString());
        assertThat(huge.code()).as(huge.toString()).isEqualTo(2);
        assertThat(huge.err()).hasLineCount(1).contains("--seeds must be a comma-separated list of integers");
        assertThat(dir.resolve("never")).doesNotExist();
    }

    @Test
    void missingDataDirIsRefusedUpFront() {
        // Seed 42 is a manifest seed, so the line is about the data folder: nothing ran.
        Cli r = Cli.run("run", "--paper", "kernels", "--seeds", "42", "--data-dir", dir.resolve("nonexistent").toString(),
                "--out", dir.resolve("never").toString());
        assertThat(r.code()).as(r.toString()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("mechspec: --data-dir " + dir.resolve("nonexistent") + ": no such folder (see: mechspec run --help)");
        assertThat(r.out()).isEmpty();
        assertThat(dir.resolve("never")).doesNotExist();
    }

    @Test
    void aSeedOfOneSelectedPaperIsEnough() {
        Manifests m = Manifests.classpath();
        assertThat(RunCommand.unknownSeeds(m, m.papers(), "42")).isNull();
        assertThat(RunCommand.unknownSeeds(m, m.papers(), "")).isNull();
        assertThat(RunCommand.unknownSeeds(m, List.of("kernels"), "43, 44")).isNull();
        assertThat(RunCommand.unknownSeeds(m, List.of("kernels"), "7,8")).isEqualTo("--seeds 7,8 are not manifest seeds of kernels (kernels: 42, 43, 44)");
    }

    @Test
    void cudaWithoutADeviceExitsNonZeroWithTheProbesReason() {
        String reason = DeviceProbe.unavailableReason();
        assumeTrue(reason != null, "a CUDA device is present");
        Cli r = Cli.run("run", "--backend", "cuda", "--out", dir.resolve("never").toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("mechspec: --backend cuda was asked for, but " + reason);
        assertThat(dir.resolve("never")).doesNotExist();
    }
}
