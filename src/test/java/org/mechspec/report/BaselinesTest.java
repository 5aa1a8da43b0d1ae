package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CpuBackend;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestException;
import org.mechspec.spec.ManifestLoader;
import org.mechspec.spec.SeedRun;

/**
 * Declared baselines are reported beside the mechanism: a seeded half records each one's figures, and they reach the
 * records, the artifact (a {@code baselines} block whatever the template), the summary, and the gate's comparison;
 * every declared baseline is asked for once, and a malformed declaration is one line.
 */
class BaselinesTest {
    private static final String MANIFEST = """
            {"paper": "demo", "title": "t", "seeds": [42], "dataset": {}, "protocol": {}, "claim_policy": {},
             "limitations": [], "sources": [], "checks": [{"name": "c", "description": "d"}],
             "metrics": [{"name": "gap", "tolerance": {"abs": 1e-9, "rel": 0}}], "headline": ["gap"],
             "baselines": [{"name": "recent_only", "description": "keeps only the newest tokens"}], "artifact": {}}
            """;

    record Figures(double gap) {
    }

    private static PaperRun run(Manifest m, double mechanism, double baseline) throws Exception {
        SeedRun seed = new SeedRun(m, "c", 42, CpuBackend.INSTANCE, null);
        seed.metrics(new Figures(mechanism)).baselines(name -> new Figures(baseline));
        PaperRun run = new PaperRun("demo", "cpu");
        run.add(PaperRun.JSON.readTree(seed.toJson()), true);
        return run;
    }

    @Test
    void aBaselinesFiguresReachRecordsArtifactSummaryAndGate() throws Exception {
        Manifest m = ManifestLoader.parse("demo.json", MANIFEST);
        PaperRun run = run(m, 0.25, 0.75);
        assertThat(run.seeds.get(42L).baselines).isEqualTo(Map.of("recent_only", Map.of("gap", 0.75)));
        ObjectNode artifact = new ArtifactRenderer(m, run, new SourceFingerprints.Recorded("abc", Map.of())).render();
        assertThat(artifact.at("/baselines/recent_only/per_seed/42/gap").asDouble()).isEqualTo(0.75);
        assertThat(artifact.at("/baselines/recent_only/description").asText()).isEqualTo("keeps only the newest tokens");
        assertThat(PaperRun.fromJson(artifact.get("mechspec")).seeds.get(42L).baselines).isEqualTo(run.seeds.get(42L).baselines);
        Function<String, Manifest> manifests = p -> m;
        assertThat(RunSummary.render(List.of(run), manifests, Path.of("a"), Path.of("p"), Map.of(), Path.of("r")))
                .contains("- gap = 0.2500 (n = 1)").contains("- baseline recent_only: gap = 0.7500 (n = 1)");
        assertThat(ArtifactDiff.compare(m, run, run(m, 0.25, 0.75))).isEmpty();
        assertThat(ArtifactDiff.compare(m, run, run(m, 0.25, 0.5)))
                .singleElement().asString().startsWith("mechspec.seeds.42.baselines.recent_only.metrics.gap: 0.75 vs reference 0.5");
    }

    @Test
    void everyDeclaredBaselineIsAskedForAndAMalformedDeclarationIsOneLine() {
        Manifest m = ManifestLoader.parse("demo.json", MANIFEST);
        SeedRun seed = new SeedRun(m, "c", 42, CpuBackend.INSTANCE, null);
        List<String> asked = new java.util.ArrayList<>();
        seed.baselines(name -> {
            asked.add(name);
            return new Figures(1);
        });
        assertThat(asked).as("each declared baseline, once").containsExactly("recent_only");
        assertThatThrownBy(() -> ManifestLoader.parse("demo.json", MANIFEST.replace("\"recent_only\"", "\"Recent Only\"")))
                .isInstanceOf(ManifestException.class).hasMessageContaining("field 'baselines[0]' must be");
        assertThat(ManifestLoader.parse("demo.json", MANIFEST.replace("\"baselines\"", "\"notes\""))
                .baselines()).isEmpty();
    }
}
