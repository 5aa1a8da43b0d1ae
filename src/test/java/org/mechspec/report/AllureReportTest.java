package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.qameta.allure.Allure;
import io.qameta.allure.AllureLifecycle;
import io.qameta.allure.ConfigurationBuilder;
import io.qameta.allure.FileSystemResultsWriter;
import io.qameta.allure.ReportGenerator;
import io.qameta.allure.junitplatform.AllureJunitPlatform;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.mechspec.foldbias.FoldBiasContractsForReport;

/**
 * What a reviewer sees: fold-bias's contracts run (seed 42, CPU) into Allure results of their own, the report is
 * generated with Allure's own generator, and its data shows a contract with the manifest's description and its
 * figure-against-threshold step, the paper's arXiv link, the metrics table, and the plots attached under the epic.
 */
@Tag("platform")
class AllureReportTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void theGeneratedReportExplainsAFoldBiasContractAndCarriesItsPlots() throws Exception {
        Path results = dir.resolve("allure-results");
        Path report = dir.resolve("report");
        runFoldBiasIntoAllure(results);
        new ReportGenerator(ConfigurationBuilder.bundled().build()).generate(report, List.of(results));

        List<JsonNode> cases = new ArrayList<>();
        try (Stream<Path> files = Files.list(report.resolve("data/test-cases"))) {
            for (Path f : (Iterable<Path>) files::iterator) {
                cases.add(JSON.readTree(Files.readString(f)));
            }
        }
        JsonNode slack = cases.stream().filter(c -> c.path("name").asText().startsWith("outputErrorBoundSeeded")).findFirst().orElseThrow();
        assertThat(slack.path("description").asText()).contains("Check same_value_output_error_bound:", "Threshold: 1.000e-12",
                "Holds when minimum_output_bound_slack >= -threshold");
        assertThat(steps(slack)).anyMatch(s -> s.matches("minimum_output_bound_slack = [0-9.e-]+ ≥ -1\\.000e-12"));
        assertThat(slack.path("links").toString()).contains("https://arxiv.org/abs/2610.36520");
        assertThat(attachments(slack)).contains("metrics (table)", "metrics");
        assertThat(label(slack, "epic")).isEqualTo("fold-bias");

        JsonNode plots = cases.stream().filter(c -> c.path("name").asText().equals("fold-bias plots (cpu)")).findFirst().orElseThrow();
        assertThat(label(plots, "epic")).isEqualTo("fold-bias");
        assertThat(attachments(plots)).contains("output-error.svg", "bound-slack.svg");
        // The CUDA-only contract, skipped on the CPU backend, is filed under its category; every category is declared.
        assertThat(Files.readString(report.resolve("data/categories.json"))).contains("\"name\":\"skipped: no GPU\"");
        assertThat(Files.readString(results.resolve("categories.json"))).contains("check failed", "skipped: data missing");
    }

    /** The contracts with a lifecycle writing to {@code results}, restored afterwards (the build's own stays clean). */
    private void runFoldBiasIntoAllure(Path results) {
        AllureLifecycle build = Allure.getLifecycle();
        AllureLifecycle ours = new AllureLifecycle(new FileSystemResultsWriter(results));
        Map<String, String> props = Map.of("mechspec.out", dir.resolve("mechspec/reports").toString(),
                "allure.results.directory", results.toString(), "mechspec.backend", "cpu", "mechspec.seeds", "42",
                org.mechspec.worker.Implementation.PROPERTY, ""); // mechspec's own fold-bias, whatever the build judges
        Map<String, String> saved = new HashMap<>();
        props.forEach((k, v) -> saved.put(k, System.setProperty(k, v)));
        Allure.setLifecycle(ours);
        try {
            LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false)
                            .addTestExecutionListeners(new AllureJunitPlatform(ours), new ReportListener()).build())
                    .execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(FoldBiasContractsForReport.fixture())).build());
        } finally {
            Allure.setLifecycle(build);
            saved.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
    }

    private static List<String> steps(JsonNode testCase) {
        List<String> out = new ArrayList<>();
        testCase.path("testStage").path("steps").forEach(s -> out.add(s.path("name").asText()));
        return out;
    }

    private static List<String> attachments(JsonNode testCase) {
        List<String> out = new ArrayList<>();
        testCase.path("testStage").path("attachments").forEach(a -> out.add(a.path("name").asText()));
        testCase.path("testStage").path("steps").forEach(s -> s.path("attachments").forEach(a -> out.add(a.path("name").asText())));
        return out;
    }

    private static String label(JsonNode testCase, String name) {
        for (JsonNode l : testCase.path("labels")) {
            if (l.path("name").asText().equals(name)) {
                return l.path("value").asText();
            }
        }
        return "";
    }
}
