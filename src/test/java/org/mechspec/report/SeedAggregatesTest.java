package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Given each seed file's own per-seed values, our statistics reproduce every aggregate block of that file
 * (mean, sample std, n, ci95, and the scalar *_mean / *_max figures) to 1e-12 relative.
 */
@Tag("platform")
class SeedAggregatesTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final double REL = 1e-12;

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "fold-bias.000_20bc18518796452b.json, per_seed, metrics, metrics",
        "pn-mix.002_9d6477e26dc5885a.json, runs, metrics, metrics",
        "oal.004_29e8e1ddd5ac2b2e.json, per_seed, , metrics aggregate aggregate_metrics",
    })
    void aggregatesReproduceTheSeedFile(String file, String perSeedArray, String perSeedField, String blocks) throws IOException {
        JsonNode seed = JSON.readTree(Files.readString(Path.of("fixtures/seeds", file)));
        List<JsonNode> rows = new ArrayList<>();
        seed.get(perSeedArray).forEach(r -> rows.add(perSeedField == null ? r : r.get(perSeedField)));
        int compared = 0;
        for (String block : blocks.split(" ")) {
            for (Map.Entry<String, JsonNode> e : (Iterable<Map.Entry<String, JsonNode>>) seed.get(block)::fields) {
                if (e.getValue().isObject()) {
                    List<Double> xs = values(rows, e.getKey());
                    for (Map.Entry<String, JsonNode> stat : (Iterable<Map.Entry<String, JsonNode>>) e.getValue()::fields) {
                        assertClose(block + "." + e.getKey() + "." + stat.getKey(), statistic(stat.getKey(), xs), stat.getValue().asDouble());
                        compared++;
                    }
                } else {
                    // Scalar summaries such as oal_validation_output_mse_mean or recurrent_dense_max_error_max.
                    String name = e.getKey();
                    String stat = name.substring(name.lastIndexOf('_') + 1);
                    String metric = name.substring(0, name.lastIndexOf('_'));
                    assertClose(block + "." + name, statistic(stat, values(rows, metric)), e.getValue().asDouble());
                    compared++;
                }
            }
        }
        assertThat(compared).as("aggregate figures compared in " + file).isGreaterThan(8);
    }

    @org.junit.jupiter.api.Test
    void mutantPopulationStdDoesNotReproduceTheSeedFile() throws IOException {
        JsonNode seed = JSON.readTree(Files.readString(Path.of("fixtures/seeds/fold-bias.000_20bc18518796452b.json")));
        List<JsonNode> rows = new ArrayList<>();
        seed.get("per_seed").forEach(r -> rows.add(r.get("metrics")));
        List<Double> xs = values(rows, "drop_bias_output_error");
        double populationStd = Statistics.sampleStd(xs) * Math.sqrt((xs.size() - 1.0) / xs.size());
        double expected = seed.at("/metrics/drop_bias_output_error/std").asDouble();
        assertThat(Math.abs(populationStd - expected)).isGreaterThan(REL * expected);
    }

    private static List<Double> values(List<JsonNode> rows, String metric) {
        List<Double> xs = new ArrayList<>();
        rows.forEach(r -> xs.add(r.get(metric).asDouble()));
        return xs;
    }

    /** The seed files name the sample standard deviation both std and sample_std; the template's statistic is std. */
    private static double statistic(String stat, List<Double> xs) {
        return Statistics.byName(stat.equals("sample_std") ? "std" : stat, xs);
    }

    private static void assertClose(String what, double ours, double theirs) {
        if (theirs == 0.0) {
            assertThat(ours).as(what).isEqualTo(0.0);
        } else {
            assertThat(Math.abs(ours - theirs)).as(what + ": ours " + ours + " vs seed " + theirs).isLessThanOrEqualTo(REL * Math.abs(theirs));
        }
    }
}
