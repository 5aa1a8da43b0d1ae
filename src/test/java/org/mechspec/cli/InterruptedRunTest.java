package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ctrl-C during a worker's call: the run ends (exit 130) with a summary naming the contract it interrupted and what
 * finished before it, and nothing of the worker is left: neither the worker busy in its call, nor the child it started,
 * nor the exchange folder. The signal goes to the JVM alone, as a terminal's does: the worker runs in a session of its
 * own, out of the terminal's reach, so the run must stop it.
 */
@Tag("worker")
class InterruptedRunTest {
    @TempDir
    Path tmp;

    @Test
    void ctrlCDuringACallEndsTheRunWithASummaryAndLeavesNothing() throws Exception {
        Path state = Files.createDirectories(tmp.resolve("state"));
        Path out = tmp.resolve("out");
        List<String> command = ChildMain.command(Main.class.getName(), List.of("-Dmechspec.fixtures.dir=" + Path.of("fixtures").toAbsolutePath(),
                "-Dmechspec.reports.dir=" + Path.of("reports").toAbsolutePath()), "run", "--implementation",
                "python3 " + Path.of("src/test/worker/misbehaving_worker.py").toAbsolutePath() + " busy-with-child " + state,
                "--paper", "kernels", "--seeds", "42", "--quiet", "--out", out.toString());
        // A terminal's JVM takes SIGINT; one started where SIGINT is ignored (a script's background job, as CI may be)
        // inherits the ignore and the JVM then installs no handler, so the child is exec'd with SIGINT at its default.
        List<String> withSigint = new java.util.ArrayList<>(List.of("python3", "-c",
                "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])"));
        withSigint.addAll(command);
        Process run = new ProcessBuilder(withSigint).directory(tmp.toFile()).redirectErrorStream(true)
                .redirectOutput(tmp.resolve("run.log").toFile()).start();
        Path inCall = state.resolve("in-call");
        // Waits on an event, not a clock: the worker names its pids (a rename into STATE) once its first call has begun;
        // a run that ends first closes the watch.
        try (java.nio.file.WatchService watch = state.getFileSystem().newWatchService()) {
            state.register(watch, java.nio.file.StandardWatchEventKinds.ENTRY_CREATE, java.nio.file.StandardWatchEventKinds.ENTRY_MODIFY);
            run.onExit().thenRun(() -> {
                try {
                    watch.close();
                } catch (java.io.IOException e) {
                    // the wait below then ends on its own check
                }
            });
            while (!Files.exists(inCall)) {
                watch.take().reset();
            }
        } catch (java.nio.file.ClosedWatchServiceException runEnded) {
            // the run ended before the call began: the assertion below says so, with its log
        }
        String log = Files.readString(tmp.resolve("run.log"), StandardCharsets.UTF_8);
        assertThat(inCall).as("the worker's call began; the run's log: %s", log).exists();
        long[] pids = java.util.Arrays.stream(Files.readString(inCall).trim().split(" ")).mapToLong(Long::parseLong).toArray();

        long signalled = System.nanoTime();
        assertThat(new ProcessBuilder("kill", "-INT", Long.toString(run.pid())).start().waitFor()).isZero();
        assertThat(run.waitFor(2, TimeUnit.MINUTES)).as("the run ended after Ctrl-C").isTrue();
        double seconds = (System.nanoTime() - signalled) / 1e9;
        log = Files.readString(tmp.resolve("run.log"), StandardCharsets.UTF_8);

        assertThat(run.exitValue()).as("exit status after SIGINT (%.2f s after the signal); log: %s", seconds, log).isEqualTo(130);
        assertThat(out.resolve("summary.md")).exists();
        String summary = Files.readString(out.resolve("summary.md"));
        assertThat(summary).as("the summary (%.2f s after the signal)", seconds)
                .contains("Interrupted (Ctrl-C or SIGTERM) during kernels fp16_round_nearest_even_exhaustive").contains("Before it: ");
        assertThat(log).contains("mechspec: Interrupted (Ctrl-C or SIGTERM) during kernels fp16_round_nearest_even_exhaustive");
        for (long pid : pids) {
            ProcessHandle.of(pid).ifPresent(p -> p.onExit().orTimeout(30, TimeUnit.SECONDS).join());
            assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).as("process %d (the worker, then its child) left running", pid).isEmpty();
        }
        assertThat(ExchangeFolders.ownedBy(run.pid())).as("exchange folders left by the run").isEmpty();
    }
}
