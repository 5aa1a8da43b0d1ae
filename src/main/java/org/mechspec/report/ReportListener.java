package org.mechspec.report;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.reporting.ReportEntry;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.mechspec.spec.ContractCoverage;
import org.mechspec.spec.ContractExtension;
import org.mechspec.spec.KnownRejections;
import org.mechspec.spec.MissingDataSkips;
import org.mechspec.spec.ManifestLoader;
import org.mechspec.spec.SeedRun;

/**
 * Collects the contracts' report entries and outcomes and, when the plan finishes, writes one artifact per
 * paper and backend to {@code -Dmechspec.out} (default target/mechspec/reports), atomically, plus Allure's
 * environment.properties. Registered through META-INF/services, so Maven and the CLI use the same listener.
 * A failed seeded check is false in the artifact; Surefire fails the build on the same failure.
 */
public final class ReportListener implements TestExecutionListener {
    private final Map<TestIdentifier, JsonNode> seeded = new ConcurrentHashMap<>();
    private final Map<TestIdentifier, String> property = new ConcurrentHashMap<>();
    /** Why a property half judged nothing of the outside implementation, by test. */
    private final Map<TestIdentifier, String> propertyNotJudged = new ConcurrentHashMap<>();
    /** Per paper, per check: why its property half was not judged, and the message of its failure. */
    private final Map<String, Map<String, String>> propertyNotJudgedWhy = new TreeMap<>();
    private final Map<String, Map<String, String>> propertyFailures = new TreeMap<>();
    /** Invocations that judged nothing of the implementation (aborted, but no skip: the summary lists each). */
    private int notJudged;
    private final Map<String, PaperRun> runs = new TreeMap<>();
    private final Map<String, Map<String, Boolean>> propertyOutcomes = new TreeMap<>();
    private final List<String> errors = new ArrayList<>();
    /** Why tests were skipped for want of a data set: the data layer's line (file, where to get it, the flag). */
    private final java.util.Set<String> missingData = new java.util.TreeSet<>();
    /** Test outcomes by Allure's names (passed, failed, broken, skipped), for the Trend. */
    private final Map<String, Integer> outcomes = new TreeMap<>();
    /** A run of the project's contracts (not a test's fixture launch): only it prints the summary. */
    private boolean contractRun;
    /** Why tests were skipped (no device, no data, no such seed): each distinct reason, with how many tests it skipped. */
    private final Map<String, Integer> skipReasons = new LinkedHashMap<>();
    private TestPlan plan;
    /** Per paper.backend, per seed: the first failure of a seeded invocation (why a protocol may not have run). */
    private final Map<String, Map<Long, String>> failures = new TreeMap<>();
    /** Why an artifact was not written, by paper.backend (the summary names it instead of a file). */
    private final Map<String, String> notWritten = new TreeMap<>();
    /** Why this run writes nothing: its output folder is or holds a committed folder (null: it writes). */
    private String refusedOut;
    /**
     * Removes what an earlier run left (artifacts, Allure results), so neither the gate nor the report mixes
     * stale outcomes with this run's.
     */
    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        this.plan = plan;
        String committed = OutputFolder.committedOverlap(outputDir());
        if (committed != null) {
            // Nothing is cleared or written there; with no artifact from this run, the gate and `mechspec run` fail.
            refusedOut = "-Dmechspec.out=" + outputDir() + " refused: it " + committed + "; nothing was written";
            System.out.println("[mechspec] ERROR " + refusedOut);
            return;
        }
        clearStale(outputDir(), Path.of(System.getProperty("allure.results.directory", "target/allure-results")));
        // Whatever -Dgroups selected, a run of contracts in a checkout checks that every declared check has its tests
        // (a bundle or a `mechspec run` elsewhere runs what a checked build already covered).
        contractRun = ContractCoverage.runsAContract(plan);
        if (ContractCoverage.inACheckout() && contractRun) {
            try {
                ContractCoverage.findings().forEach(f -> errors.add("contract coverage: " + f));
            } catch (RuntimeException e) {
                errors.add("contract coverage could not be checked: " + firstLine(e));
            }
        }
    }

    /** Deletes an earlier run's artifacts and record files in {@code reports} and its results in {@code allureResults}. */
    public static void clearStale(Path reports, Path allureResults) {
        clear(reports, "[a-z0-9-]+\\.[a-z0-9-]+\\.json|" + ListenerErrors.FILE.replace(".", "\\.")
                + "|" + ListenerErrors.MISSING_DATA_FILE.replace(".", "\\.") + "|" + ListenerErrors.IMPLEMENTATION_FILE.replace(".", "\\."));
        clear(allureResults, "[0-9a-f-]{36}-(result|container|attachment)\\..*|environment\\.properties");
    }

    private static void clear(Path dir, String namePattern) {
        if (!java.nio.file.Files.isDirectory(dir)) {
            return;
        }
        try (var files = java.nio.file.Files.list(dir)) {
            for (Path p : (Iterable<Path>) files.filter(f -> f.getFileName().toString().matches(namePattern))::iterator) {
                java.nio.file.Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot clear stale files in " + dir, e);
        }
    }

    private static Path outputDir() {
        return Path.of(System.getProperty("mechspec.out", "target/mechspec/reports"));
    }

    @Override
    public void reportingEntryPublished(TestIdentifier id, ReportEntry entry) {
        entry.getKeyValuePairs().forEach((key, value) -> {
            try {
                if (key.equals(SeedRun.ENTRY_KEY)) {
                    seeded.put(id, PaperRun.JSON.readTree(value));
                } else if (key.equals(ContractExtension.PROPERTY_KEY)) {
                    property.put(id, value);
                } else if (key.equals(ContractExtension.PROPERTY_NOT_JUDGED_KEY)) {
                    propertyNotJudged.put(id, value);
                }
            } catch (IOException e) {
                synchronized (this) {
                    errors.add(id.getDisplayName() + ": unreadable mechspec report entry: " + e.getMessage());
                }
            }
        });
    }

    @Override
    public synchronized void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (id.isTest()) {
            outcomes.merge(switch (result.getStatus()) {
                case SUCCESSFUL -> "passed";
                case ABORTED -> "skipped";
                case FAILED -> result.getThrowable().filter(t -> t instanceof AssertionError).isPresent() ? "failed" : "broken";
            }, 1, Integer::sum);
        }
        String why = propertyNotJudged.remove(id);
        if (result.getStatus() == TestExecutionResult.Status.ABORTED && (why != null || seeded.containsKey(id)
                && seeded.get(id).hasNonNull(PaperRun.NOT_JUDGED))) {
            notJudged++;
            JsonNode entry = seeded.remove(id);
            if (entry != null) { // the seed's record, with its figures (mechspec's own) and why it holds no verdict
                String key = entry.get("paper").asText() + "." + entry.get("backend").asText();
                runs.computeIfAbsent(key, k -> new PaperRun(entry.get("paper").asText(), entry.get("backend").asText())).add(entry, true);
            }
            String prop = property.remove(id);
            if (prop != null && why != null) {
                String[] pc = prop.split("/", 2);
                propertyNotJudgedWhy.computeIfAbsent(pc[0], p -> new TreeMap<>()).putIfAbsent(pc[1], why);
            }
            return;
        }
        if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
            seeded.remove(id);
            property.remove(id);
            result.getThrowable().filter(MissingDataSkips::forMissingData).ifPresent(t -> missingData.add(firstLine(t)));
            skipReasons.merge(result.getThrowable().map(ReportListener::skipReason).orElse("no reason given"), testsUnder(id), Integer::sum);
            return; // skipped (no data, no device): not a run
        }
        boolean passed = result.getStatus() == TestExecutionResult.Status.SUCCESSFUL;
        JsonNode entry = seeded.remove(id);
        if (entry != null) {
            String key = entry.get("paper").asText() + "." + entry.get("backend").asText();
            if (!passed) {
                failures.computeIfAbsent(key, k -> new TreeMap<>()).putIfAbsent(entry.get("seed").asLong(),
                        result.getThrowable().map(ReportListener::firstLine).orElse("failed"));
            }
            try {
                runs.computeIfAbsent(key, k -> new PaperRun(entry.get("paper").asText(), entry.get("backend").asText()))
                        .add(entry, passed);
            } catch (RuntimeException e) {
                errors.add(key + ": " + id.getDisplayName() + ": " + firstLine(e));
            }
        }
        String prop = property.remove(id);
        if (prop != null) {
            String[] pc = prop.split("/", 2);
            propertyOutcomes.computeIfAbsent(pc[0], p -> new LinkedHashMap<>()).merge(pc[1], passed, Boolean::logicalAnd);
            if (!passed) {
                propertyFailures.computeIfAbsent(pc[0], p -> new TreeMap<>()).putIfAbsent(pc[1], RunSummary.propertyFailure(
                        result.getThrowable().map(t -> String.valueOf(t.getMessage())).orElse("failed"), replay(pc[0])));
            }
        }
    }

    @Override
    public synchronized void testPlanExecutionFinished(TestPlan plan) {
        if (refusedOut != null) {
            System.out.println("[mechspec] ERROR " + refusedOut);
            return;
        }
        Path out = outputDir();
        Map<String, String> devices = new TreeMap<>();
        String commit = "unknown";
        try {
            SourceFingerprints.Recorded fingerprints = SourceFingerprints.recorded();
            commit = fingerprints.commit();
            org.mechspec.worker.Implementation judged = org.mechspec.worker.Implementation.started();
            for (PaperRun run : runs.values()) {
                devices.put(run.backend, run.device);
                if (judged != null && run.backend.equals(judged.id())) {
                    // The seeded entries saw the calls made so far; the property halves that ran after them count too.
                    run.deviceProvenance.set("implementation", PaperRun.JSON.valueToTree(judged.provenance(run.paper)));
                }
                write(out, run, fingerprints);
            }
        } catch (RuntimeException e) {
            errors.add("reporter: " + firstLine(e));
        }
        if (!runs.isEmpty()) {
            try {
                AllureEnvironment.write(devices, commit);
                AllureEnvironment.writeCategories();
                AllureEnvironment.trend(out.toAbsolutePath().getParent().resolve("allure-history"), outcomes, commit);
            } catch (RuntimeException e) {
                errors.add("Allure environment, categories or trend not written: " + firstLine(e));
            }
            try {
                Path plots = out.toAbsolutePath().getParent().resolve("plots");
                String summary = RunSummary.render(List.copyOf(runs.values()), ManifestLoader::forPaper, out, plots, notWritten,
                        Path.of(System.getProperty("allure.results.directory", "target/allure-results")), KnownRejections::of);
                Path summaryFile = out.toAbsolutePath().getParent().resolve("summary.md");
                AtomicFiles.write(summaryFile, summary);
                if (contractRun) {
                    System.out.println();
                    int cut = summary.indexOf(RunSummary.REJECTS_HEADING);
                    (cut < 0 ? summary : summary.substring(0, cut)).lines().forEach(l -> System.out.println("[mechspec] " + l));
                    if (cut >= 0) {
                        System.out.println("[mechspec] what each check is known to reject (its mutant tests): " + summaryFile);
                    }
                }
            } catch (IOException | RuntimeException e) {
                errors.add("run summary not written: " + firstLine(e));
            }
        }
        org.mechspec.worker.Implementation impl = org.mechspec.worker.Implementation.started();
        if (impl != null) {
            try {
                AtomicFiles.write(out.resolve(ListenerErrors.IMPLEMENTATION_FILE),
                        impl.id() + "\n" + String.join("\n", impl.handshake().operations().keySet()) + "\n");
            } catch (IOException e) {
                errors.add("implementation record not written: " + firstLine(e));
            }
        }
        if (org.mechspec.spec.Stress.active()) {
            try {
                org.mechspec.spec.Stress.write(java.nio.file.Files.createDirectories(out.toAbsolutePath().getParent().resolve("stress")))
                        .forEach(f -> System.out.println("[mechspec] stress: wrote " + f));
                if (!Boolean.getBoolean("mechspec.quiet")) { // mechspec stress prints its own table
                    org.mechspec.spec.Stress.byPaper().forEach((paper, ledger) ->
                            System.out.println("[mechspec] stress, " + paper + ":\n" + org.mechspec.spec.Stress.table(ledger)));
                }
            } catch (IOException | RuntimeException e) {
                errors.add("stress ledger not written: " + firstLine(e));
            }
        }
        writeErrors(out);
        // JUnit keeps an aborted test's reason to itself; without these lines a run without a GPU or data looks complete.
        skipReasons.forEach((why, n) -> System.out.println("[mechspec] skipped " + n + " test(s): " + why));
        if (notJudged > 0) {
            System.out.println("[mechspec] not judged: " + notJudged + " test(s) computed nothing of the implementation (the summary names each check no other test of it judged)");
        }
        try {
            if (missingData.isEmpty()) {
                java.nio.file.Files.deleteIfExists(out.resolve(ListenerErrors.MISSING_DATA_FILE));
            } else {
                AtomicFiles.write(out.resolve(ListenerErrors.MISSING_DATA_FILE), String.join("\n", missingData) + "\n");
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + out.resolve(ListenerErrors.MISSING_DATA_FILE), e);
        }
    }

    /**
     * One paper's artifact; a paper that cannot be rendered is an error line, and the others are still written. A seed
     * whose every invocation recorded nothing and one failed did not run its protocol (bad data, a broken input): no
     * artifact then, whose metrics would be empty and checks false for a reason it would not state.
     */
    private void write(Path out, PaperRun run, SourceFingerprints.Recorded fingerprints) {
        String name = run.paper + "." + run.backend;
        Path file = out.resolve(name + ".json");
        Map<Long, String> failed = failures.getOrDefault(name, Map.of());
        List<Long> notRun = run.seeds.keySet().stream().filter(seed -> run.seeds.get(seed).metrics.isEmpty() && failed.containsKey(seed)).toList();
        if (!notRun.isEmpty()) {
            String why = "the protocol did not run on seed" + (notRun.size() == 1 ? " " : "s ")
                    + notRun.stream().map(String::valueOf).collect(java.util.stream.Collectors.joining(", ")) + ": " + failed.get(notRun.get(0));
            notWritten.put(name, why);
            errors.add(name + ": artifact not written: " + why);
            return;
        }
        try {
            propertyOutcomes.getOrDefault(run.paper, Map.of()).forEach(run::propertyOutcome);
            propertyNotJudgedWhy.getOrDefault(run.paper, Map.of()).forEach(run::propertyNotJudged);
            run.propertyFailures.putAll(propertyFailures.getOrDefault(run.paper, Map.of()));
            var artifact = new ArtifactRenderer(ManifestLoader.forPaper(run.paper), run, fingerprints).render();
            AtomicFiles.write(file, PaperRun.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(artifact) + "\n");
            System.out.println("[mechspec] wrote " + file + " (" + run.seeds.size() + " seeds)");
            try {
                AllureEnvironment.plotsResult(run.paper, run.backend, Plots.write(artifact, out.toAbsolutePath().getParent().resolve("plots")));
            } catch (RuntimeException e) {
                errors.add(name + ": plots not drawn: " + firstLine(e));
            }
        } catch (IOException | RuntimeException e) {
            notWritten.put(name, firstLine(e) + partialHint(run));
            errors.add(name + ": artifact not written: " + firstLine(e) + partialHint(run));
        }
    }

    /**
     * JUnit only logs a listener's exceptions, so the errors go to {@value ListenerErrors#FILE} beside the artifacts, where
     * the build's report gate and {@code mechspec run} fail on them; a clean run removes an old one.
     */
    private void writeErrors(Path out) {
        Path file = out.resolve(ListenerErrors.FILE);
        try {
            if (errors.isEmpty()) {
                java.nio.file.Files.deleteIfExists(file);
                return;
            }
            errors.forEach(e -> System.out.println("[mechspec] ERROR " + e));
            AtomicFiles.write(file, String.join("\n", errors) + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + " (" + errors + ")", e);
        }
    }

    /** When fewer of the paper's checks ran than it declares, the likely reason an artifact could not be rendered. */
    private static String partialHint(PaperRun run) {
        java.util.Set<String> ran = new java.util.TreeSet<>(run.propertyChecks.keySet());
        run.seeds.values().forEach(r -> ran.addAll(r.checks.keySet()));
        int declared;
        try {
            declared = ManifestLoader.forPaper(run.paper).checks().size();
        } catch (RuntimeException e) {
            return "";
        }
        return ran.size() >= declared ? "" : " (" + ran.size() + " of its " + declared + " declared checks ran: a partial run leaves"
                + " metrics unmeasured; run the paper's whole tag, e.g. -Dgroups=" + run.paper + ")";
    }

    /** The commands that replay a paper's property halves with this run's property seed (QuickTheories draws the same inputs). */
    private static String replay(String paper) {
        long seed = org.mechspec.spec.Properties.seed();
        org.mechspec.worker.Implementation impl = org.mechspec.worker.Implementation.started();
        String judged = impl == null ? "" : " --implementation '" + impl.command().replace("'", "'\\''") + "'";
        return "`" + org.mechspec.spec.Properties.runCommand() + " --paper " + paper + " --property-seed " + seed + judged
                + "` (Maven: -Dmechspec.propertySeed=" + seed + ")";
    }

    /** The one line a skip gives: the assumption's message, without JUnit's "Assumption failed: " prefix. */
    static String skipReason(Throwable t) {
        String line = firstLine(t).strip();
        return line.startsWith("Assumption failed: ") ? line.substring("Assumption failed: ".length()) : line;
    }

    /** A test counts once; an aborted container counts the tests it held (which then never start). */
    private int testsUnder(TestIdentifier id) {
        if (id.isTest() || plan == null) {
            return 1;
        }
        return (int) Math.max(1, plan.getDescendants(id).stream().filter(TestIdentifier::isTest).count());
    }

    private static String firstLine(Throwable t) {
        String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
