package org.mechspec.cli;

import org.mechspec.report.TemplateForm;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.mechspec.report.ClaimPolicy;
import org.mechspec.spec.Manifest;

/**
 * The three seed files (../shared/seeds/, copied to fixtures/seeds/) validate against the real manifests built into
 * the jar, and variants broken where each manifest's template says the dynamic parts are do not. A case runs once
 * its paper's manifest is in contracts/, and is skipped with the reason until then.
 */
@Tag("cli")
class SeedFilesTest {
    @TempDir
    Path dir;

    private static Manifest manifestOrSkip(String paper) {
        Manifests manifests = Manifests.classpath();
        assumeTrue(manifests.papers().contains(paper), "contracts/" + paper + ".json is not on this branch yet");
        return manifests.forPaper(paper);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"fold-bias, 000_20bc18518796452b", "pn-mix, 002_9d6477e26dc5885a", "oal, 004_29e8e1ddd5ac2b2e"})
    void seedFileValidatesAndItsBrokenVariantsDoNot(String paper, String seedName) {
        Manifest manifest = manifestOrSkip(paper);
        Path seed = Path.of("fixtures/seeds", paper + "." + seedName + ".json");
        Path shared = Path.of("../shared/seeds", seedName + ".txt");
        Cli valid = Cli.run("validate", seed.toString());
        assertThat(valid.code()).as(valid.toString()).isZero();
        if (Files.exists(shared)) {
            assertThat(Cli.run("validate", shared.toString()).code()).as("validate " + shared).isZero();
        }
        TemplatePositions template = TemplatePositions.of(manifest.artifact());
        ArtifactContent content = ArtifactContent.read(manifest, template, Artifacts.read(seed));

        // Corrupt the first aggregate figure the template places.
        TemplatePositions.Position figure = template.top.stream()
                .filter(p -> p.form() == TemplateForm.AGGREGATE || p.form() == TemplateForm.STAT).findFirst().orElseThrow();
        JsonPath number = firstNumber(figure.path(), figure.path().in(Artifacts.read(seed)));
        expectFinding(seed, "corrupt-aggregate", a -> setNumber(a, number, number.in(a).asDouble() * (1 + 1e-9) + 1e-300), number + ": ");

        // Drop the first per-seed metric and change the type of another.
        Map.Entry<String, JsonPath> metric = content.metricOrigin.entrySet().iterator().next();
        expectFinding(seed, "drop-metric", a -> parent(a, metric.getValue()).remove(last(metric.getValue())), metric.getValue() + ": missing");
        expectFinding(seed, "retype-metric", a -> parent(a, metric.getValue()).put(last(metric.getValue()), "1.0"),
                metric.getValue() + ": expected number or boolean, got string");

        // Flip the first check outcome (or boolean metric named like a check), where the seed file records one.
        Stream.concat(content.checkOrigin.entrySet().stream(), content.metricOrigin.entrySet().stream()
                        .filter(e -> manifest.checks().containsKey(e.getKey().split("/", 2)[1])))
                .findFirst().ifPresent(check -> expectFinding(seed, "flip-check",
                        a -> parent(a, check.getValue()).put(last(check.getValue()), false), check.getValue() + ": "));

        // Remove the negative-result sentences, where a seed contradicts a hypothesis.
        if (!ClaimPolicy.violations(manifest, content.metrics).isEmpty()) {
            JsonPath sentence = template.top(TemplateForm.NEGATIVE_RESULT).get(0).path();
            expectFinding(seed, "drop-negative-result", a -> parent(a, sentence).put(last(sentence), manifest.hypothesisCaveat()),
                    sentence + ": does not state the contradicting seed");
        }
    }

    @Test
    void committedKernelsReferenceValidates() {
        manifestOrSkip("kernels");
        Cli r = Cli.run("validate", "reports/kernels.cpu.json");
        assertThat(r.code()).as(r.toString()).isZero();
    }

    private void expectFinding(Path seed, String name, java.util.function.Consumer<ObjectNode> change, String expected) {
        Path broken = Artifacts.edit(seed, dir.resolve(name + ".json"), change);
        Cli r = Cli.run("validate", broken.toString());
        assertThat(r.code()).as(name + ": " + r).isEqualTo(1);
        assertThat(r.out()).as(name).contains(broken + ": " + expected);
    }

    private static JsonPath firstNumber(JsonPath at, JsonNode n) {
        if (n.isNumber()) {
            return at;
        }
        var fields = n.fields();
        while (fields.hasNext()) {
            var e = fields.next();
            JsonPath found = firstNumber(at.key(e.getKey()), e.getValue());
            if (found != null) {
                return found;
            }
        }
        return null;
    }

    private static ObjectNode parent(ObjectNode root, JsonPath path) {
        return (ObjectNode) new JsonPath(path.segments().subList(0, path.segments().size() - 1)).in(root);
    }

    private static String last(JsonPath path) {
        return (String) path.segments().get(path.segments().size() - 1);
    }

    private static void setNumber(ObjectNode root, JsonPath path, double value) {
        parent(root, path).put(last(path), value == 0 ? 1.0 : value);
    }
}
