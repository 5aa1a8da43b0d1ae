package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.spec.ManifestLoader;

@Tag("platform")
class RunSummaryTest {
    @Test
    void namesFailedAndUnrunChecksHeadlinesAndNegativeResults() {
        var manifest = ManifestLoader.load(Path.of("contracts/oal.json"));
        PaperRun run = new PaperRun("oal", "cpu");
        run.device = "a CPU";
        for (long seed : List.of(42L, 43L)) {
            manifest.checks().keySet().stream().skip(1).forEach(c -> run.seed(seed).outcome(c, true));
            run.seed(seed).metrics.put("softmax_test_ppl", seed == 42 ? 9.0 : 11.0);
            run.seed(seed).metrics.put("oal_test_ppl", seed == 42 ? 8.0 : 12.0);
        }
        String second = manifest.checks().keySet().stream().skip(1).findFirst().orElseThrow();
        run.seed(43).outcome(second, false);
        String first = manifest.checks().keySet().iterator().next();

        String s = RunSummary.render(List.of(run), p -> manifest, Path.of("out/reports"), Path.of("out/plots"), java.util.Map.of(),
                Path.of("target/allure-results"));

        int declared = manifest.checks().size();
        assertThat(s).contains("## oal.cpu — a CPU",
                "✗ " + (declared - 2) + " of " + (declared - 1) + " checks that ran held on every seed [42, 43]; not run here: " + first,
                "- ✗ " + second + ": 42 ✓ 43 ✗",
                "- softmax_test_ppl = 10 ± 1.414 (n = 2)", "- oal_test_ppl = 10 ± 2.828 (n = 2)",
                "- negative result: Seed 43 OAL test PPL 12.0000000000 is worse than matched softmax+LoRA 11.0000000000.",
                "- artifact: out/reports/oal.cpu.json", "Report: `mvn allure:report`");
    }

    @Test
    void anArtifactNotWrittenIsNamedWithItsReasonAndARunFolderGetsItsOwnReportHint() {
        var manifest = ManifestLoader.load(Path.of("contracts/pn-mix.json"));
        PaperRun run = new PaperRun("pn-mix", "cpu");
        run.seed(42).outcome(manifest.checks().keySet().iterator().next(), false);

        String s = RunSummary.render(List.of(run), p -> manifest, Path.of("out/reports"), Path.of("out/plots"),
                java.util.Map.of("pn-mix.cpu", "the protocol did not run on seed 42: hamlet.txt has SHA-256 x, expected y"),
                Path.of("out/allure-results"));

        assertThat(s).contains("- artifact not written: the protocol did not run on seed 42: hamlet.txt has SHA-256 x, expected y")
                .doesNotContain("out/reports/pn-mix.cpu.json").doesNotContain("Report: `mvn allure:report`")
                .contains("Allure results: out/allure-results (render them with the Allure command line: `allure generate out/allure-results");
    }
}
