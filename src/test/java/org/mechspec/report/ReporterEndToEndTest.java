package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.spec.Contract;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;

/**
 * Runs a small contract class through a real JUnit Platform launcher with the reporter's listener and reads the artifact it writes: metrics, failed checks as false,
 * property-half failures, negative results, aggregates, and the Allure environment.
 */
@Tag("platform")
class ReporterEndToEndTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    @TempDir
    static Path dir;
    static JsonNode artifact;
    static Path out;

    @BeforeAll
    static void runFixtureThroughLauncher() throws Exception {
        Path contracts = Files.createDirectories(dir.resolve("contracts"));
        out = dir.resolve("out");
        Files.writeString(contracts.resolve("selftest.json"), MANIFEST);
        Map<String, String> props = Map.of("mechspec.contracts.dir", contracts.toString(), "mechspec.out", out.toString(),
                "allure.results.directory", dir.resolve("allure").toString(), "mechspec.backend", "cpu", "mechspec.seeds", "");
        FixtureLauncher.run(SelfTestContracts.class, props);
        artifact = JSON.readTree(Files.readString(out.resolve("selftest.cpu.json")));
    }

    @Test
    void passingCheckIsTrueAndFailedCheckIsFalseWithItsMetricKept() {
        for (JsonNode row : artifact.get("per_seed")) {
            long seed = row.get("seed").asLong();
            assertThat(row.at("/checks/passes").asBoolean()).isTrue();
            assertThat(row.at("/checks/fails").asBoolean()).as("seed %s", seed).isEqualTo(seed < 43);
            assertThat(row.at("/metrics/failing_metric").asDouble()).isEqualTo(1.0);
        }
    }

    @Test
    void failedPropertyHalfMakesItsCheckFalseOnEverySeed() {
        artifact.get("per_seed").forEach(row -> assertThat(row.at("/checks/property_fails").asBoolean()).isFalse());
        assertThat(artifact.at("/mechspec/property_checks/property_fails").asBoolean()).isFalse();
    }

    @Test
    void aggregatesAndIntegerTypesComeFromTheRun() {
        assertThat(artifact.at("/metrics/value/mean").asDouble()).isEqualTo(43 * 1.5);
        assertThat(artifact.at("/metrics/value/std").asDouble()).isEqualTo(1.5);
        assertThat(artifact.at("/metrics/value/n").asInt()).isEqualTo(3);
        assertThat(artifact.at("/metrics/bytes/mean").isIntegralNumber()).isTrue();
        assertThat(artifact.at("/metrics/bytes/mean").asLong()).isEqualTo(1024);
        assertThat(artifact.at("/seeds").toString()).isEqualTo("[42,43,44]");
    }

    @Test
    void contradictingSeedYieldsANegativeResultAndNoImprovementClaim() {
        assertThat(artifact.get("negative_result").asText())
                .isEqualTo("Seed 43 lhs 2.0000000000 is not below rhs 1.5000000000. Three seeds are few.");
        assertThat(artifact.get("claims_improvement").asBoolean()).isFalse();
        assertThat(artifact.get("gpu_validated").asBoolean()).as("a CPU run never claims GPU validation").isFalse();
    }

    @Test
    void singleSeedFormsPickThatSeedsValue() {
        assertThat(artifact.at("/one_seed/seed").asLong()).isEqualTo(42);
        assertThat(artifact.at("/one_seed/fails_on_43").isBoolean()).isTrue();
        assertThat(artifact.at("/one_seed/fails_on_43").asBoolean()).isFalse();
        assertThat(artifact.at("/one_seed/value_of_first").asDouble()).isEqualTo(63.0);
    }

    @Test
    void provenanceAndAllureEnvironmentAreWrittenAndNoTempFileIsLeft() throws Exception {
        assertThat(artifact.at("/provenance/commit").asText()).isNotBlank();
        assertThat(artifact.at("/provenance/backend").asText()).isEqualTo("cpu");
        assertThat(artifact.at("/mechspec/manifest_sha256").asText()).hasSize(64);
        assertThat(Files.readString(dir.resolve("allure/environment.properties"))).contains("device.cpu=", "commit=", "jvm=");
        try (Stream<Path> files = Files.list(out)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("selftest.cpu.json");
        }
    }

    @Tag("launcher-fixture")
    static class SelfTestContracts {
        @Contract(paper = "selftest", check = "passes")
        @Seeded
        void passes(SeedRun run) {
            run.metric("value", run.seed() * 1.5).metric("bytes", 1024L);
            run.metric("lhs", run.seed() == 43 ? 2.0 : 1.0).metric("rhs", 1.5);
        }

        @Contract(paper = "selftest", check = "fails")
        @Seeded
        void fails(SeedRun run) {
            run.metric("failing_metric", 1.0);
            assertThat(run.seed()).isLessThan(43);
        }

        @Contract(paper = "selftest", check = "property_fails")
        @Seeded
        void propertySeeded(SeedRun run) {
            run.metric("lhs", run.seed() == 43 ? 2.0 : 1.0);
        }

        @Contract(paper = "selftest", check = "property_fails")
        @Test
        void propertyHalf() {
            assertThat(1).isEqualTo(2);
        }
    }

    private static final String MANIFEST = """
            {
              "paper": "selftest", "title": "reporter self-test", "seeds": [42, 43, 44],
              "dataset": {"id": "none"}, "protocol": {"id": "none"}, "claim_policy": {"tier": "l1_mechanism"},
              "limitations": [], "sources": ["src/main/java/org/mechspec/report"],
              "checks": [
                {"name": "passes", "description": "always"},
                {"name": "fails", "description": "fails from seed 43"},
                {"name": "property_fails", "description": "its property half fails"}
              ],
              "metrics": [{"name": "value"}, {"name": "bytes"}, {"name": "failing_metric"}, {"name": "lhs"}, {"name": "rhs"}],
              "hypotheses": [{"lhs": "lhs", "rhs": "rhs", "sentence": "Seed {seed} lhs {lhs} is not below rhs {rhs}."}],
              "hypothesis_caveat": "Three seeds are few.",
              "artifact": {
                "seeds": "$seeds",
                "per_seed": {"$each_seed": {"seed": "$seed", "metrics": {"$metrics": "*"}, "checks": "$checks"}},
                "metrics": {"$aggregate": {"stats": ["mean", "std", "n"], "metrics": ["value", "bytes"]}},
                "negative_result": "$negative_result",
                "claims_improvement": "$claims_improvement",
                "gpu_validated": "$gpu_validated",
                "one_seed": {"seed": "$first_seed", "fails_on_43": {"$check": {"name": "fails", "seed": 43}},
                             "value_of_first": {"$metric": {"name": "value", "seed": "first"}}},
                "provenance": {"commit": "$commit", "backend": "$backend", "sources": "$sources"}
              }
            }
            """;
}
