package org.mechspec.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.reporting.ReportEntry;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.mechspec.spec.ContractExtension;
import org.mechspec.spec.SeedRun;

/**
 * One line per failed contract, so a run's log says what failed without a stack trace wall; unless quiet, one
 * progress line per finished contract invocation (paper, check, seed, elapsed).
 */
final class FailurePrinter implements TestExecutionListener {
    private final PrintWriter out;
    private final boolean quiet;
    private final long start = System.nanoTime();
    private TestPlan plan;
    /** Invocations the outside implementation computed nothing of (JUnit counts them as aborted). */
    long notJudged;

    FailurePrinter(PrintWriter out, boolean quiet) {
        this.out = out;
        this.quiet = quiet;
    }

    @Override
    public void reportingEntryPublished(TestIdentifier id, ReportEntry entry) {
        String record = entry.getKeyValuePairs().get(SeedRun.ENTRY_KEY);
        if (quiet || record == null) {
            return;
        }
        try {
            var r = new ObjectMapper().readTree(record);
            out.printf(Locale.ROOT, "[mechspec] %s %s seed %d (%s) (%.1f s)%n", r.path("paper").asText(), r.path("check").asText(),
                    r.path("seed").asLong(), r.path("backend").asText(), (System.nanoTime() - start) / 1e9);
            out.flush();
        } catch (IOException e) {
            // a progress line is not worth failing a run for; the reporter names unreadable entries
        }
    }

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        plan = testPlan;
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (id.isTest() && result.getStatus() == TestExecutionResult.Status.ABORTED && result.getThrowable()
                .filter(t -> String.valueOf(t.getMessage()).startsWith(ContractExtension.NOT_JUDGED)).isPresent()) {
            notJudged++;
        }
        if (result.getStatus() == TestExecutionResult.Status.FAILED) {
            String why = result.getThrowable().map(t -> oneLine(String.valueOf(t.getMessage()))).orElse("");
            out.println("FAILED " + name(id) + ": " + why);
            out.flush();
        }
    }

    /** AssertJ messages span lines ("[what] Expecting actual: 43 to be less than: 43"): one line, shortened. */
    private static String oneLine(String message) {
        String line = message.replaceAll("\\s+", " ").strip();
        return line.length() <= 240 ? line : line.substring(0, 237) + "...";
    }

    private String name(TestIdentifier id) {
        List<String> parts = new ArrayList<>();
        for (TestIdentifier t = id; t != null && t.getParentId().isPresent(); t = plan.getParent(t).orElse(null)) {
            parts.add(0, t.getDisplayName());
        }
        return String.join(" > ", parts);
    }
}
