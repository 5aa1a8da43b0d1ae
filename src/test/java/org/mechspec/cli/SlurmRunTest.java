package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code mechspec slurm} against a real Slurm started for this machine ({@link LocalSlurm}): kernels and fold-bias
 * × 2 seeds on the CPU backend as an array job and a merge job; a shard made to fail is named by the merge job, and
 * {@code resubmit} recovers it; the merged artifacts equal the committed single-process references (no drift);
 * nothing listens beyond loopback; every daemon is stopped by its pid.
 */
@Tag("slurm")
@Tag("cli")
class SlurmRunTest {
    @TempDir
    Path dir;
    private LocalSlurm slurm;

    @AfterEach
    void stopTheCluster() throws Exception {
        if (slurm != null) {
            slurm.close();
            assertThat(slurm.stopped()).as("every daemon the test started has exited").isTrue();
        }
    }

    @Test
    void shardsRunAsAnArrayMergeIntoTheReferencesAndAFailedShardIsNamedAndResubmitted() throws Exception {
        String missing = LocalSlurm.missing();
        assumeThat(missing).as(String.valueOf(missing)).isNull();
        Path checkout = Path.of("").toAbsolutePath();
        Path data = Path.of(System.getProperty("mechspec.data.dir", "../shared/data")).toAbsolutePath().normalize();
        slurm = LocalSlurm.start(Files.createDirectories(dir.resolve("cluster")));
        assertThat(slurm.listenersBeyondLoopback()).as("the daemons listen on loopback only").isEmpty();
        Path launcher = launcher();
        Path run = dir.resolve("run");

        // Written first (--dry-run), so one shard's folder can be made unusable before its task runs.
        Out dry = mechspec(launcher, "slurm", "submit", "--paper", "kernels", "--paper", "fold-bias", "--seeds", "42,43",
                "--backend", "cpu", "--data-dir", data.toString(), "--out", run.toString(), "--time", "00:20:00", "--dry-run", "--", "--mem=0");
        assertThat(dry.code).as(dry.text).isZero();
        assertThat(dry.text).contains("(4 tasks)", "#SBATCH --array=0-3", "#SBATCH --time=00:20:00", "#SBATCH --mem=0",
                "slurm merge", "dry run: nothing submitted").doesNotContain("submitted array job");
        Path blocked = Files.createDirectories(run.resolve("shards/fold-bias-43"));
        Files.writeString(blocked.resolve("not-mechspecs.txt"), "a stranger's file: mechspec run refuses this folder\n");

        Out submit = mechspec(launcher, "slurm", "submit", "--paper", "kernels", "--paper", "fold-bias", "--seeds", "42,43",
                "--backend", "cpu", "--data-dir", data.toString(), "--out", run.toString(), "--time", "00:20:00", "--", "--mem=0");
        assertThat(submit.code).as(submit.text).isZero();
        assertThat(submit.text).containsPattern("submitted array job \\d+ \\(4 tasks\\) and merge job \\d+");
        waitForTheQueueToEmpty();
        String mergeLog = mergeLogs(run);
        assertThat(mergeLog).as("the merge job names the failed shard and its log")
                .contains("fold-bias: failed shard fold-bias-43 (task 3) exited 2, no artifact; log " + run.resolve("logs/task-3.log"));
        assertThat(Files.readString(run.resolve("logs/task-3.log"))).contains("refused, a folder that holds files and was not made by mechspec");
        assertThat(run.resolve("merged/reports/kernels.cpu.json")).exists();
        assertThat(run.resolve("merged/reports/fold-bias.cpu.json")).as("not merged while a shard is missing").doesNotExist();
        Out status = mechspec(launcher, "slurm", "status", run.toString());
        assertThat(status.text).containsPattern("3 +fold-bias-43 +failed \\(exit 2\\)").containsPattern("0 +kernels-42 +done");

        Files.delete(blocked.resolve("not-mechspecs.txt"));
        Out resubmit = mechspec(launcher, "slurm", "resubmit", run.toString());
        assertThat(resubmit.code).as(resubmit.text).isZero();
        assertThat(resubmit.text).containsPattern("resubmitted fold-bias-43 as array job \\d+, merge job \\d+");
        waitForTheQueueToEmpty();
        assertThat(mechspec(launcher, "slurm", "status", run.toString()).text).containsPattern("3 +fold-bias-43 +done");
        for (String paper : List.of("kernels", "fold-bias")) {
            Path merged = run.resolve("merged/reports/" + paper + ".cpu.json");
            Out diff = mechspec(launcher, "diff", "--seeds", "42,43", merged.toString(), checkout.resolve("reports/" + paper + ".cpu.json").toString());
            assertThat(diff.code).as("the merged " + paper + " artifact equals the single-process reference: " + diff.text).isZero();
        }
        assertThat(Files.readString(run.resolve("merged/summary.md"))).contains("kernels.cpu: 2 shards merged", "fold-bias.cpu: 2 shards merged");
        assertThat(Files.list(run.resolve("merged/allure-results")).count()).as("the whole run's Allure results").isPositive();
        assertThat(mechspec(launcher, "slurm", "resubmit", run.toString()).text).contains("nothing to resubmit");
    }

    /** bin/mechspec as the bundle's launcher runs it, over this build's classes (the tasks run it on the node). */
    private Path launcher() throws IOException {
        Path bin = dir.resolve("bin/mechspec");
        Files.createDirectories(bin.getParent());
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        Files.writeString(bin, "#!/bin/sh\nexec " + SlurmPlan.quote(java) + " -Xmx1g -XX:TieredStopAtLevel=1 -Djava.io.tmpdir="
                + SlurmPlan.quote(tmp.toString()) + " -Dmechspec.launcher=" + SlurmPlan.quote(bin.toString()) + " -cp "
                + SlurmPlan.quote(System.getProperty("java.class.path")) + " org.mechspec.cli.Main \"$@\"\n");
        bin.toFile().setExecutable(true);
        return bin;
    }

    private record Out(int code, String text) {
    }

    private Out mechspec(Path launcher, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        command.addAll(List.of(args));
        ProcessBuilder b = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        b.environment().putAll(slurm.environment());
        Process p = b.start();
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
        return new Out(p.exitValue(), text);
    }

    /** At most 8 minutes for the array and its merge job (four JVMs on this machine's cores). */
    private void waitForTheQueueToEmpty() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(8);
        while (!slurm.command("squeue", "--noheader").isBlank()) {
            assertThat(System.nanoTime()).as("jobs still queued after 8 minutes: " + slurm.command("squeue") + slurm.logs())
                    .isLessThan(deadline);
            Thread.sleep(1000);
        }
    }

    private static String mergeLogs(Path run) throws IOException {
        StringBuilder b = new StringBuilder();
        try (var logs = Files.list(run.resolve("logs"))) {
            for (Path f : logs.filter(f -> f.getFileName().toString().startsWith("merge-")).sorted().toList()) {
                b.append(Files.readString(f));
            }
        }
        return b.toString();
    }
}
