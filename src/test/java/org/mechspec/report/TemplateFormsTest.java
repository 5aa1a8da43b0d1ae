package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestException;
import org.mechspec.spec.ManifestLoader;

/** The template says each thing once: manifest fields by reference, one grammar for $metric, one name per statistic. */
@Tag("platform")
class TemplateFormsTest {
    @TempDir
    Path dir;

    private Manifest manifest(String artifact) throws Exception {
        Path file = dir.resolve("forms.json");
        Files.writeString(file, """
                {"paper": "forms", "title": "Forms", "seeds": [42, 43], "dataset": {"id": "synthetic:forms-v1"},
                 "protocol": {"id": "p"}, "claim_policy": {"tier": "l1_mechanism"}, "limitations": ["few seeds"],
                 "sources": ["src/main/java/org/mechspec/forms"], "checks": [{"name": "c", "description": "d"}],
                 "metrics": [{"name": "x"}]%s}
                """.formatted(artifact.isEmpty() ? "" : ", \"artifact\": " + artifact));
        return ManifestLoader.load(file);
    }

    private static JsonNode render(Manifest m) {
        PaperRun run = new PaperRun("forms", "cpu");
        run.seed(42).metrics.put("x", 1.0);
        run.seed(42).outcome("c", true);
        run.seed(43).metrics.put("x", 3.0);
        run.seed(43).outcome("c", true);
        return new ArtifactRenderer(m, run, "c0ffee", Map.of("a", "b"), "JVM").render();
    }

    @Test
    void manifestFieldsAreReferencedNotRepeated() throws Exception {
        JsonNode a = render(manifest("""
                {"tier": {"$manifest": "claim_policy.tier"}, "limits": {"$manifest": "limitations"}, "title": {"$manifest": "title"}}"""));
        assertThat(a.get("tier").asText()).isEqualTo("l1_mechanism");
        assertThat(a.get("limits").toString()).isEqualTo("[\"few seeds\"]");
        assertThat(a.get("title").asText()).isEqualTo("Forms");
        assertThatThrownBy(() -> render(manifest("{\"t\": {\"$manifest\": \"claim_policy.nothing\"}}")))
                .isInstanceOf(ManifestException.class).hasMessageContaining("names no field of the manifest");
    }

    @Test
    void metricAndCheckTakeOneGrammar() throws Exception {
        JsonNode a = render(manifest("""
                {"rows": {"$each_seed": {"x": {"$metric": {"name": "x"}}, "c": {"$check": {"name": "c"}}}},
                 "x43": {"$metric": {"name": "x", "seed": 43}}}"""));
        assertThat(a.at("/rows/1/x").asDouble()).isEqualTo(3.0);
        assertThat(a.at("/rows/0/c").asBoolean()).isTrue();
        assertThat(a.get("x43").asDouble()).isEqualTo(3.0);
        assertThatThrownBy(() -> render(manifest("{\"rows\": {\"$each_seed\": {\"x\": {\"$metric\": \"x\"}}}}")))
                .isInstanceOf(ManifestException.class).hasMessageContaining("$metric takes {\"name\": ..., \"seed\": ...}, got \"x\"");
    }

    @Test
    void oneNamePerStatisticWrittenUnderTheKeyALayoutWants() throws Exception {
        JsonNode a = render(manifest("""
                {"agg": {"$aggregate": {"stats": ["mean", "std", {"sample_std": "std"}], "metrics": "*"}}}"""));
        assertThat(a.at("/agg/x/mean").asDouble()).isEqualTo(2.0);
        assertThat(a.at("/agg/x/sample_std").asDouble()).isEqualTo(a.at("/agg/x/std").asDouble()).isEqualTo(Math.sqrt(2.0));
        assertThatThrownBy(() -> render(manifest("{\"s\": {\"$stat\": {\"metric\": \"x\", \"stat\": \"sample_std\"}}}")))
                .hasMessageContaining("unknown statistic 'sample_std'");
    }

    @Test
    void aPaperWithoutTemplateOrSeedArtifactGetsTheDefaultOne() throws Exception {
        JsonNode a = render(manifest(""));
        assertThat(a.get("paper").asText()).isEqualTo("forms");
        assertThat(a.get("limitations").toString()).isEqualTo("[\"few seeds\"]");
        assertThat(a.at("/per_seed/1/metrics/x").asDouble()).isEqualTo(3.0);
        assertThat(a.at("/metrics/x/n").asInt()).isEqualTo(2);
        assertThat(a.at("/provenance/commit").asText()).isEqualTo("c0ffee");
        assertThat(a.has("mechspec")).isTrue();
    }
}
