package org.mechspec.report;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import org.mechspec.spec.Manifest;

/**
 * The one-screen summary of a run: per paper and backend, which checks held on which seeds (✓/✗, failures named; a
 * property half's failure with its shrunk case and replay command; – with the reason for a check an outside
 * implementation computed nothing of, which is not judged rather than held),
 * the manifest's headline metrics as mean ± sample std over seeds, the negative results, and where the artifact,
 * report and plots are. Printed at the end of {@code mvn verify} and {@code mechspec run}, and kept as summary.md.
 */
public final class RunSummary {
    private RunSummary() {
    }

    /**
     * @param notWritten why an artifact was not written, by {@code paper.backend}: the summary names the reason there
     *                   instead of a file that does not exist
     * @param allureResults where this run's Allure results went; the hint says how to render that folder
     */
    public static String render(List<PaperRun> runs, Function<String, Manifest> manifests, Path artifacts, Path plots,
                                Map<String, String> notWritten, Path allureResults) {
        return render(runs, manifests, artifacts, plots, notWritten, allureResults, (paper, check) -> List.of());
    }

    /** The heading of the summary's last section, which the console leaves out (summary.md keeps it). */
    public static final String REJECTS_HEADING = "## What each check is known to reject";

    /**
     * As above, ending with {@value #REJECTS_HEADING}: per paper and check, one line per broken mechanism its mutant
     * tests show it rejects ({@code rejects}: paper, check → lines), so a reader of a verdict sees what "true" rules out.
     */
    public static String render(List<PaperRun> runs, Function<String, Manifest> manifests, Path artifacts, Path plots,
                                Map<String, String> notWritten, Path allureResults,
                                java.util.function.BiFunction<String, String, List<String>> rejects) {
        StringBuilder b = new StringBuilder("# mechspec summary\n");
        for (PaperRun run : runs) {
            Manifest m = manifests.apply(run.paper);
            b.append("\n## ").append(run.paper).append('.').append(run.backend).append(" — ").append(run.device.isBlank() ? run.backend : run.device)
                    .append("\n\n");
            List<String> failed = new ArrayList<>();
            List<String> notJudged = new ArrayList<>();
            List<String> notRun = new ArrayList<>();
            int checks = 0;
            for (String check : m.checks().keySet()) {
                StringBuilder row = new StringBuilder();
                boolean ran = false;
                boolean anyFailed = Boolean.FALSE.equals(run.propertyChecks.get(check));
                java.util.Set<String> why = new java.util.TreeSet<>();
                for (long seed : run.seeds.keySet()) {
                    PaperRun.SeedRecord r = run.seeds.get(seed);
                    if (r.checks.containsKey(check) || r.notJudged.containsKey(check)) {
                        ran = true;
                        Boolean verdict = run.verdict(seed, check);
                        anyFailed |= Boolean.FALSE.equals(verdict);
                        if (verdict == null) {
                            why.add(r.notJudged.get(check));
                        }
                        row.append(' ').append(seed).append(verdict == null ? " –" : verdict ? " ✓" : " ✗");
                    }
                }
                checks += ran ? 1 : 0;
                if (!ran) {
                    notRun.add(check);
                } else if (anyFailed) {
                    String property = run.propertyFailures.get(check);
                    failed.add("- ✗ " + check + ":" + row + (Boolean.FALSE.equals(run.propertyChecks.get(check))
                            ? "; property half failed" + (property == null ? "" : ": " + property) : ""));
                } else if (!why.isEmpty()) {
                    notJudged.add("- – " + check + ":" + row + "; not judged: " + String.join("; ", why));
                }
                if (ran && !anyFailed && run.propertyNotJudged.containsKey(check)) {
                    notJudged.add("- – " + check + " (property half): not judged: " + run.propertyNotJudged.get(check));
                }
            }
            long judgedNothing = notJudged.stream().filter(l -> !l.contains(" (property half): ")).count();
            b.append(failed.isEmpty() ? "✓ " : "✗ ").append(checks - failed.size() - judgedNothing).append(" of ").append(checks)
                    .append(" checks that ran held on every seed ").append(run.seeds.keySet())
                    .append(notJudged.isEmpty() ? "" : ", " + failed.size() + " failed, " + judgedNothing + " not judged (the implementation"
                            + " computed nothing of them)")
                    .append(notRun.isEmpty() ? "" : "; not run here: " + String.join(", ", notRun)).append('\n');
            failed.forEach(f -> b.append(f).append('\n'));
            notJudged.forEach(f -> b.append(f).append('\n'));
            for (String metric : m.headline()) {
                headline(b, "", metric, run.seeds.values().stream().map(r -> r.metrics.get(metric)).toList());
                for (Manifest.Baseline base : m.baselines()) {
                    headline(b, "baseline " + base.name() + ": ", metric, run.seeds.values().stream()
                            .map(r -> r.baselines.getOrDefault(base.name(), Map.of()).get(metric)).toList());
                }
            }
            Map<Long, Map<String, Object>> perSeed = new java.util.LinkedHashMap<>();
            run.seeds.forEach((s, r) -> perSeed.put(s, r.metrics));
            ClaimPolicy.violations(m, perSeed).forEach(v -> b.append("- negative result: ").append(v).append('\n'));
            String why = notWritten.get(run.paper + "." + run.backend);
            b.append(why == null ? "- artifact: " + artifacts.resolve(run.paper + "." + run.backend + ".json") : "- artifact not written: " + why)
                    .append('\n');
        }
        b.append('\n').append(reportHint(allureResults)).append("; plots: ").append(plots).append('\n');
        StringBuilder known = new StringBuilder();
        new java.util.TreeSet<>(runs.stream().map(r -> r.paper).toList()).forEach(paper -> {
            for (String check : manifests.apply(paper).checks().keySet()) {
                List<String> lines = rejects.apply(paper, check);
                if (!lines.isEmpty()) {
                    known.append("\n").append(paper).append(" / ").append(check).append(":\n");
                    lines.forEach(l -> known.append("- ").append(l).append('\n'));
                }
            }
        });
        if (!known.isEmpty()) {
            b.append('\n').append(REJECTS_HEADING).append('\n').append(known);
        }
        return b.toString();
    }

    /**
     * A failed property half in one line: QuickTheories' shrunk case (its "Smallest found falsifying value(s)"), the
     * first line of its cause, and the command that replays it ({@code replay}, e.g. {@code mechspec run --paper P
     * --property-seed N}).
     */
    public static String propertyFailure(String message, String replay) {
        String shrunk = after(message, "Smallest found falsifying value(s) :-");
        String cause = after(message, "Cause was :-");
        String first = message.strip().lines().findFirst().orElse("failed").strip();
        return (shrunk.isEmpty() ? first : "smallest falsifying case " + shrunk) + (cause.isEmpty() ? "" : " — " + cause)
                + "; replay: " + replay;
    }

    /** The first non-blank line after {@code marker} in {@code message}, or "". */
    private static String after(String message, String marker) {
        int at = message.indexOf(marker);
        if (at < 0) {
            return "";
        }
        return message.substring(at + marker.length()).lines().map(String::strip).filter(l -> !l.isEmpty()).findFirst().orElse("");
    }

    /** How to see this run's Allure results: Maven's report for a build, the Allure command line for another folder. */
    static String reportHint(Path allureResults) {
        if (allureResults.toAbsolutePath().normalize().equals(Path.of("target/allure-results").toAbsolutePath())) {
            return "Report: `mvn allure:report` → target/site/allure-maven-plugin/index.html";
        }
        return "Allure results: " + allureResults + " (render them with the Allure command line: `allure generate " + allureResults
                + " -o REPORT_DIR`; `mvn allure:report` reads only a build's target/allure-results)";
    }

    /** One line of a headline metric's mean ± std over the seeds that recorded it (none: no line). */
    private static void headline(StringBuilder b, String whose, String metric, List<Object> values) {
        List<Double> xs = new ArrayList<>();
        values.forEach(v -> {
            if (v instanceof Number n) {
                xs.add(n.doubleValue());
            }
        });
        if (!xs.isEmpty()) {
            b.append("- ").append(whose).append(metric).append(" = ").append(number(Statistics.mean(xs)))
                    .append(xs.size() > 1 ? " ± " + number(Statistics.sampleStd(xs)) : "").append(" (n = ").append(xs.size()).append(")\n");
        }
    }

    private static String number(double x) {
        return x == Math.rint(x) && Math.abs(x) < 1e15 ? Long.toString((long) x) : String.format(Locale.ROOT, "%.4g", x);
    }
}
