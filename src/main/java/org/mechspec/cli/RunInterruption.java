package org.mechspec.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.Method;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.mechspec.report.AtomicFiles;
import org.mechspec.spec.Contract;

/**
 * What a run did before Ctrl-C (or SIGTERM) ended it. While the launch runs, a shutdown hook is installed: on a signal
 * it takes what has finished and which contract was running, stops the worker at once (no grace: it may be busy in a
 * call), and writes summary.md (and the same lines to stdout), so an interrupted run says what ran and where it
 * stopped instead of ending with nothing. No artifact is written: a partial one would read as a finished run's.
 */
final class RunInterruption implements TestExecutionListener {
    /** The tests running now (a launch runs one at a time; kept as a map so a container's children are named too). */
    private final Map<String, TestIdentifier> running = new LinkedHashMap<>();
    private final List<String> failedChecks = new ArrayList<>();
    private long passed;
    private long failed;
    private long notJudged;
    private long skipped;

    @Override
    public synchronized void executionStarted(TestIdentifier id) {
        if (id.isTest()) {
            running.put(id.getUniqueId(), id);
        }
    }

    @Override
    public synchronized void executionSkipped(TestIdentifier id, String reason) {
        if (id.isTest()) {
            skipped++;
        }
    }

    @Override
    public synchronized void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (!id.isTest()) {
            return;
        }
        running.remove(id.getUniqueId());
        switch (result.getStatus()) {
            case SUCCESSFUL -> passed++;
            case FAILED -> {
                failed++;
                String why = result.getThrowable().map(t -> String.valueOf(t.getMessage())).orElse("failed")
                        .replaceAll("\\s+", " ").strip();
                failedChecks.add(contractOf(id) + ": " + (why.length() <= 240 ? why : why.substring(0, 237) + "..."));
            }
            case ABORTED -> {
                if (result.getThrowable().filter(t -> String.valueOf(t.getMessage())
                        .startsWith(org.mechspec.spec.ContractExtension.NOT_JUDGED)).isPresent()) {
                    notJudged++;
                } else {
                    skipped++;
                }
            }
        }
    }

    /** Runs {@code launch} with the hook installed; the hook goes when the launch ends normally. */
    void during(Runnable launch, Path out, PrintWriter stdout) {
        Thread hook = new Thread(() -> interrupted(out, stdout), "mechspec-run-interrupted");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            launch.run();
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // The hook is running or has run: it writes the summary.
            }
        }
    }

    /** The hook: what ran and where it stopped, taken first (the worker's stop fails the call in flight), then written. */
    private void interrupted(Path out, PrintWriter stdout) {
        String report;
        synchronized (this) {
            List<String> where = running.values().stream().map(RunInterruption::describe).toList();
            StringBuilder b = new StringBuilder("# mechspec run interrupted\n\n");
            b.append("Interrupted (Ctrl-C or SIGTERM) ").append(where.isEmpty() ? "between contracts" : "during " + String.join(", ", where))
                    .append("; no artifact was written.\n\n");
            b.append("Before it: ").append(passed).append(" passed, ").append(failed).append(" failed, ").append(notJudged)
                    .append(" not judged, ").append(skipped).append(" skipped.\n");
            failedChecks.forEach(f -> b.append("- ✗ ").append(f).append('\n'));
            report = b.toString();
        }
        org.mechspec.worker.Implementation impl = org.mechspec.worker.Implementation.started();
        if (impl != null) {
            impl.closeAtShutdown();
        }
        Path summary = out.toAbsolutePath().resolve("summary.md");
        try {
            AtomicFiles.write(summary, report);
        } catch (IOException | RuntimeException e) {
            stdout.println("mechspec: the interrupted run's summary was not written: " + e.getMessage());
        }
        report.lines().filter(l -> !l.isBlank() && !l.startsWith("#")).forEach(l -> stdout.println("mechspec: " + l));
        stdout.println("mechspec: summary: " + summary);
        stdout.flush();
    }

    /** paper/check of a contract test (from its {@code @Contract}), else its display name. */
    private static String contractOf(TestIdentifier id) {
        return id.getSource().filter(MethodSource.class::isInstance).map(s -> {
            try {
                Method m = ((MethodSource) s).getJavaMethod();
                Contract[] c = m.getAnnotationsByType(Contract.class);
                return c.length == 0 ? null : c[0].check();
            } catch (RuntimeException e) {
                return null;
            }
        }).orElse(id.getDisplayName());
    }

    private static String describe(TestIdentifier id) {
        String check = contractOf(id);
        String paper = id.getSource().filter(MethodSource.class::isInstance).map(s -> {
            try {
                Contract[] c = ((MethodSource) s).getJavaMethod().getAnnotationsByType(Contract.class);
                return c.length == 0 ? "" : c[0].paper() + " ";
            } catch (RuntimeException e) {
                return "";
            }
        }).orElse("");
        return paper + check + " (" + id.getDisplayName() + ")";
    }
}
