package org.mechspec.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The protocol's failure modes, each against a worker that commits it on purpose ({@code src/test/worker/
 * misbehaving_worker.py}): a bad handshake or reply is one line naming the operation, the tensor and the index; a
 * crash, a hang or garbage fails the call with the worker's last stderr lines, and the next call restarts it; nothing
 * the worker started outlives a stop.
 */
@Tag("worker")
class WorkerProtocolTest {
    private static final String WORKER = "python3 src/test/worker/misbehaving_worker.py ";
    private static final double[] X = {0.1, 1.0 / 3, 65519.0, -2.5e-8};

    @TempDir
    Path state;

    private Implementation start(String mode, long timeoutMillis) {
        return Implementation.start(WORKER + mode + " " + state, timeoutMillis, List.of());
    }

    private static Call roundToHalf(Implementation impl) {
        return impl.call("round_to_half", Operations.EXACT).input("x", X, X.length).output("y", WireTensor.Dtype.F64, X.length);
    }

    @Test
    void aWellBehavedCallReturnsTheWorkersTensors() {
        try (Implementation impl = start("fine", 30_000)) {
            assertThat(impl.id()).isEqualTo("misbehaving");
            double[] expected = new double[X.length];
            for (int i = 0; i < X.length; i++) {
                expected[i] = org.mechspec.compute.HalfFloat.roundToHalf(X[i]);
            }
            assertThat(roundToHalf(impl).run().f64("y")).containsExactly(expected);
        }
    }

    /** A worker may print at import, before it serves (a banner, a progress bar): the handshake skips such lines. */
    @Test
    void linesPrintedBeforeTheHandshakeAreSkipped() {
        try (Implementation impl = start("banner", 30_000)) {
            assertThat(impl.id()).isEqualTo("misbehaving");
            assertThat(roundToHalf(impl).run().f64("y")).hasSize(X.length);
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "bad-name   | handshake name 'CPU!' must match",
        "unknown-op | handshake names unknown operation 'round_to_hlaf'",
        "no-ops     | handshake declares no operations",
        "dup-keys   | Duplicate field 'name'"})
    void aBadHandshakeIsOneLineAndStartsNothing(String mode, String message) {
        assertThatThrownBy(() -> start(mode, 30_000)).isInstanceOf(WorkerException.class).hasMessageContaining(message)
                .hasMessageNotContaining("\n");
        assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive)
                .map(h -> h.info().commandLine().orElse("")).filter(c -> c.contains("misbehaving_worker.py " + mode)))
                .as("no worker of the refused handshake is left").isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "nan     | round_to_half (exact): output 'y' is not finite at index 2 (NaN)",
        "dtype   | output 'y' has dtype F32, expected F64",
        "shape   | output 'y' has shape [3], expected [4]",
        "missing | unexpected output 'z' (expected [y])",
        "extra   | unexpected output 'debug' (expected [y])",
        "no-file | replied but wrote no ",
        "fifo      | unreadable outputs file: not a regular file (a FIFO, socket or device); not read",
        "zero-link | unreadable outputs file: not a regular file (a symbolic link); not read",
        "huge      | unreadable outputs file: 68719476736 bytes, more than the 1048608 the declared outputs can take; not read",
        "error   | reported internal: CUDA out of memory"})
    void aBadReplyFailsTheCallNamingTheOperationTensorAndIndex(String mode, String message) {
        try (Implementation impl = start(mode, 30_000)) {
            assertThatThrownBy(() -> roundToHalf(impl).run()).isInstanceOf(WorkerException.class)
                    .hasMessageStartingWith("worker misbehaving: round_to_half").hasMessageContaining(message).hasMessageNotContaining("\n");
        }
    }

    @Test
    void anInvalidArgumentIsTheSameErrorMechspecsOwnCodeGives() {
        try (Implementation impl = start("invalid", 30_000)) {
            assertThatThrownBy(() -> roundToHalf(impl).run()).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("reported invalid_argument: x must be 2-D");
        }
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "crash-once   | the worker exited (exit code 3); stderr: call 1 (crash-once) | about to fail: segfault in my kernel",
        "hang-once    | no reply within 2.0 s",
        "garbage      | stdout line is not JSON: loading weights... 100%",
        "wrong-id     | expected the reply to request 1, got: {\"id\": 2}"})
    void aCrashHangOrGarbageFailsTheCallWithStderrAndTheNextCallRestartsIt(String mode, String message) {
        try (Implementation impl = start(mode, 2_000)) {
            long first = impl.pid();
            assertThatThrownBy(() -> roundToHalf(impl).run()).isInstanceOf(WorkerException.class).hasMessageContaining(message);
            assertThat(ProcessHandle.of(first).map(ProcessHandle::isAlive)).as("the faulty worker is stopped").isNotEqualTo(Optional.of(true));
            if (mode.endsWith("-once")) {
                assertThat(roundToHalf(impl).run().f64("y")).hasSize(X.length);
                assertThat(impl.pid()).as("a new process").isNotEqualTo(first).isPositive();
            } else {
                // Restarted, it passes the handshake again and commits the same fault on the next call.
                assertThatThrownBy(() -> roundToHalf(impl).run()).isInstanceOf(WorkerException.class)
                        .hasMessageContaining(message.replaceAll("request 1, got.*", "request 2")); // ids go on counting
            }
        }
    }

    @Test
    void stoppingKillsEverythingTheWorkerStartedAndRemovesItsFolder() throws Exception {
        Implementation impl = start("child", 30_000);
        ProcessHandle root = ProcessHandle.of(impl.pid()).orElseThrow();
        List<ProcessHandle> tree = new java.util.ArrayList<>(root.descendants().toList());
        assertThat(tree).as("the worker's sleeping child").isNotEmpty();
        tree.add(root);
        impl.close();
        for (ProcessHandle p : tree) {
            p.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(p.isAlive()).as("pid %d", p.pid()).isFalse();
        }
        assertThat(impl.pid()).isEqualTo(-1);
        assertThat(impl.folder()).doesNotExist();
    }

    /**
     * A worker that started children (one in a session of its own) and then crashed: the failed call and the stop take
     * them all, although by then they were re-parented to init.
     */
    @Test
    void aCrashLeavesNoneOfTheWorkersChildrenRunning() throws Exception {
        // The worker starts both children before its handshake reply (Popen returns once each has exec'd).
        Implementation impl = start("crash-with-children", 30_000);
        assertThat(children()).as("the worker's two children started").hasSize(2);
        assertThatThrownBy(() -> roundToHalf(impl).run()).isInstanceOf(WorkerException.class).hasMessageContaining("the worker exited");
        impl.close();
        for (ProcessHandle p : children()) {
            p.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
        }
        assertThat(children().stream().filter(ProcessHandle::isAlive)).as("children left running").isEmpty();
        assertThat(impl.folder()).doesNotExist();
    }

    /** Live processes whose command line carries this test's state folder: the crash-with-children worker's children. */
    private List<ProcessHandle> children() {
        return ProcessHandle.allProcesses().filter(ProcessHandle::isAlive)
                .filter(h -> h.info().commandLine().orElse("").contains("time.sleep(1000) " + state)).toList();
    }

    /**
     * A run killed outright (SIGKILL: no shutdown hook) leaves its exchange folder; the next run removes it, and leaves
     * alone a live run's folder and one it cannot tell the owner of.
     */
    @Test
    void theNextRunRemovesTheFolderOfARunThatWasKilled() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path probe = ExchangeFolder.create();
        Path parent = probe.getParent();
        ExchangeFolder.remove(probe);
        Path orphan = Files.createDirectories(parent.resolve("mechspec-worker-killed-" + gone.pid()));
        Files.writeString(orphan.resolve("owner.pid"), Long.toString(gone.pid()));
        Files.writeString(orphan.resolve("1.in.safetensors"), "left by a killed run");
        Path live = Files.createDirectories(parent.resolve("mechspec-worker-live-" + ProcessHandle.current().pid()));
        Files.writeString(live.resolve("owner.pid"), Long.toString(ProcessHandle.current().pid()));
        Path unknown = Files.createDirectories(parent.resolve("mechspec-worker-unknown-" + gone.pid()));
        try (Implementation impl = start("child", 30_000)) {
            assertThat(orphan).as("the killed run's folder").doesNotExist();
            assertThat(live).as("a live run's folder").exists();
            assertThat(unknown).as("a folder with no owner file").exists();
        } finally {
            ExchangeFolder.remove(live);
            ExchangeFolder.remove(unknown);
        }
    }

    @Test
    void anUnknownCommandIsOneLineWithItsStderr() {
        assertThatThrownBy(() -> Implementation.start("no-such-worker-binary --serve", 10_000, List.of()))
                .isInstanceOf(WorkerException.class).hasMessageContaining("handshake").hasMessageContaining("not found");
    }
}
