package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

@Tag("platform")
class PlotsTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Per paper, file -> (metric -> legend name), written here apart from Plots' own table. */
    private static final Map<String, Map<String, Map<String, String>>> EXPECTED = Map.of(
            "oal", Map.of(
                    "test-ppl.svg", Map.of("softmax_test_ppl", "softmax + LoRA", "oal_test_ppl", "OAL"),
                    "nll-difference-interval.svg", Map.of("oal_minus_softmax_nll_ci_low", "bootstrap interval",
                            "oal_minus_softmax_nll_ci_high", "bootstrap interval"),
                    "validation-mse.svg", Map.of("oal_validation_output_mse", "OAL",
                            "global_validation_output_mse", "global quadratic baseline")),
            "pn-mix", Map.of(
                    "attention-kl.svg", Map.of("attention_kl", "saliency mask (3/1-bit keys)",
                            "random_mask_attention_kl_mean", "random masks (mean of 8)",
                            "uniform_2bit_attention_kl", "uniform 2-bit keys (equal bytes)"),
                    "cache-bytes.svg", Map.of("quantized_key_bytes", "quantized keys (codes + scale/zero)",
                            "key_bytes", "keys (with fp16 sink and residual)", "value_bytes", "values",
                            "persistent_cache_bytes", "persistent cache total")),
            "fold-bias", Map.of(
                    "output-error.svg", Map.of("drop_bias_output_error", "bias dropped",
                            "folded_output_error", "bias folded into fp16 keys"),
                    "bound-slack.svg", Map.of("minimum_output_bound_slack", "minimum slack (>= 0: bound holds)"),
                    "compaction-error.svg", Map.of("compaction_output_error", "compacted cache (top-weight keys)",
                            "arbitrary_selection_output_error", "best of 8 arbitrary key sets")));

    private static JsonNode artifact(String paper) throws Exception {
        return JSON.readTree(Path.of("reports", paper + ".cpu.json").toFile());
    }

    private static Document parse(Path svg) throws Exception {
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(svg.toFile());
        assertThat(doc.getDocumentElement().getTagName()).isEqualTo("svg");
        return doc;
    }

    /** The metadata's data lines as {series, category, metric, value}. */
    private static List<String[]> recorded(Document doc) {
        NodeList meta = doc.getElementsByTagName("metadata");
        assertThat(meta.getLength()).isEqualTo(1);
        assertThat(((Element) meta.item(0)).getAttribute("id")).isEqualTo("mechspec-plot-data");
        List<String[]> rows = new ArrayList<>();
        for (String line : meta.item(0).getTextContent().strip().split("\n")) {
            if (!line.equals("series,category,metric,value")) {
                String[] row = line.split(",", -1);
                assertThat(row).hasSize(4);
                rows.add(row);
            }
        }
        return rows;
    }

    private static Set<String> texts(Document doc) {
        Set<String> texts = new HashSet<>();
        NodeList nodes = doc.getElementsByTagName("text");
        for (int i = 0; i < nodes.getLength(); i++) {
            texts.add(nodes.item(i).getTextContent());
        }
        return texts;
    }

    @ParameterizedTest
    @ValueSource(strings = {"oal", "pn-mix", "fold-bias"})
    void everyPointDrawnIsTheArtifactsPerSeedMetric(String paper, @TempDir Path dir) throws Exception {
        JsonNode seeds = artifact(paper).path("mechspec").path("seeds");
        List<String> seedKeys = new ArrayList<>();
        seeds.fieldNames().forEachRemaining(seedKeys::add);
        assertThat(seedKeys).isNotEmpty();

        List<Path> files = Plots.write(artifact(paper), dir);
        Map<String, Map<String, String>> expected = EXPECTED.get(paper);
        assertThat(files).extracting(f -> f.getFileName().toString())
                .containsExactlyInAnyOrderElementsOf(expected.keySet());
        for (Path file : files) {
            assertThat(file.getParent()).isEqualTo(dir.resolve(paper));
            Document doc = parse(file);
            Map<String, String> series = expected.get(file.getFileName().toString());
            assertThat(texts(doc)).containsAll(series.values()).anyMatch(t -> t.startsWith(paper + ": "));
            Set<String> seen = new HashSet<>();
            for (String[] row : recorded(doc)) {
                String seed = row[1].substring("seed ".length());
                assertThat(row[1]).startsWith("seed ");
                assertThat(row[0]).isEqualTo(series.get(row[2]));
                JsonNode value = seeds.path(seed).path("metrics").path(row[2]);
                assertThat(value.isNumber()).as("%s %s", seed, row[2]).isTrue();
                assertThat(Double.parseDouble(row[3])).as("%s %s %s", file, seed, row[2])
                        .isEqualTo(value.doubleValue());
                assertThat(seen.add(seed + "/" + row[2])).isTrue();
            }
            assertThat(seen).hasSize(seedKeys.size() * series.size());
        }
    }

    @Test
    void aMissingMetricDropsOnlyItsPlot(@TempDir Path dir) throws Exception {
        JsonNode art = artifact("oal");
        ((ObjectNode) art.path("mechspec").path("seeds").path("43").path("metrics")).remove("oal_test_ppl");
        List<Path> files = Plots.write(art, dir);
        assertThat(files).extracting(f -> f.getFileName().toString())
                .containsExactlyInAnyOrder("nll-difference-interval.svg", "validation-mse.svg");
        assertThat(dir.resolve("oal/test-ppl.svg")).doesNotExist();

        JsonNode pn = artifact("pn-mix");
        for (Iterator<JsonNode> it = pn.path("mechspec").path("seeds").elements(); it.hasNext(); ) {
            ((ObjectNode) it.next().path("metrics")).put("key_bytes", "n/a");
        }
        assertThat(Plots.write(pn, dir)).extracting(f -> f.getFileName().toString())
                .containsExactly("attention-kl.svg");
    }

    @Test
    void theSameArtifactGivesTheSameBytes(@TempDir Path dir) throws Exception {
        Path first = Plots.write(artifact("fold-bias"), dir.resolve("a")).get(0);
        Path second = Plots.write(artifact("fold-bias"), dir.resolve("b")).get(0);
        assertThat(Files.readString(second)).isEqualTo(Files.readString(first));
    }

    @Test
    void kernelsAndUnknownPapersGetNoPlot(@TempDir Path dir) throws Exception {
        assertThat(Plots.write(artifact("kernels"), dir)).isEmpty();
        assertThat(Plots.write(JSON.readTree("{\"mechspec\": {\"paper\": \"nope\", \"seeds\": {}}}"), dir)).isEmpty();
        assertThat(Plots.write(JSON.readTree("{}"), dir)).isEmpty();
        try (var listing = Files.list(dir)) {
            assertThat(listing).isEmpty();
        }
    }
}
