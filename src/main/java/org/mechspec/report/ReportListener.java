package org.mechspec.report;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.reporting.ReportEntry;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;
import org.mechspec.spec.ContractExtension;
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
    private final Map<String, PaperRun> runs = new TreeMap<>();
    private final Map<String, Map<String, Boolean>> propertyOutcomes = new TreeMap<>();

    /**
     * Removes what an earlier run left (artifacts, Allure results), so neither the gate nor the report mixes
     * stale outcomes with this run's.
     */
    @Override
    public void testPlanExecutionStarted(TestPlan plan) {
        clear(outputDir(), "[a-z0-9-]+\\.(cpu|cuda)\\.json");
        clear(Path.of(System.getProperty("allure.results.directory", "target/allure-results")),
                "[0-9a-f-]{36}-(result|container|attachment)\\..*|environment\\.properties");
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
                }
            } catch (IOException e) {
                throw new UncheckedIOException("unreadable mechspec report entry: " + value, e);
            }
        });
    }

    @Override
    public synchronized void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
            seeded.remove(id);
            property.remove(id);
            return; // skipped (no data, no device): not a run
        }
        boolean passed = result.getStatus() == TestExecutionResult.Status.SUCCESSFUL;
        JsonNode entry = seeded.remove(id);
        if (entry != null) {
            String key = entry.get("paper").asText() + "." + entry.get("backend").asText();
            runs.computeIfAbsent(key, k -> new PaperRun(entry.get("paper").asText(), entry.get("backend").asText()))
                    .add(entry, passed);
        }
        String prop = property.remove(id);
        if (prop != null) {
            String[] pc = prop.split("/", 2);
            propertyOutcomes.computeIfAbsent(pc[0], p -> new LinkedHashMap<>()).merge(pc[1], passed, Boolean::logicalAnd);
        }
    }

    @Override
    public synchronized void testPlanExecutionFinished(TestPlan plan) {
        if (runs.isEmpty()) {
            return;
        }
        Path out = outputDir();
        SourceFingerprints.Recorded fingerprints = SourceFingerprints.recorded();
        Map<String, String> devices = new TreeMap<>();
        for (PaperRun run : runs.values()) {
            run.propertyChecks.putAll(propertyOutcomes.getOrDefault(run.paper, Map.of()));
            var artifact = new ArtifactRenderer(ManifestLoader.forPaper(run.paper), run, fingerprints).render();
            Path file = out.resolve(run.paper + "." + run.backend + ".json");
            try {
                AtomicFiles.write(file, PaperRun.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(artifact) + "\n");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write artifact " + file, e);
            }
            devices.put(run.backend, run.device);
            System.out.println("[mechspec] wrote " + file + " (" + run.seeds.size() + " seeds)");
        }
        AllureEnvironment.write(devices, fingerprints.commit());
    }
}
