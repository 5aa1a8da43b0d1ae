package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** mechspec stress: a paper's property halves with N examples each, the worst margins as a table and a file. */
@Tag("cli")
class StressCommandTest {
    @TempDir
    Path dir;

    @Test
    void stressingTheKernelsPropertiesPrintsTheirWorstMarginsAndWritesThem() throws Exception {
        Cli r = Cli.run("stress", "--paper", "kernels", "--examples", "60", "--out", dir.resolve("out").toString());
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(r.out()).contains("fp16_round_nearest_even_exhaustive", "attention_fp32_flash_rule", "rng_pinned_test_vector",
                "held; its property reports no figure").containsPattern("stress: kernels, \\d+ properties, 60 examples each");
        JsonNode j = new ObjectMapper().readTree(dir.resolve("out/stress/kernels.json").toFile());
        assertThat(j.path("examples_per_property").asInt()).isEqualTo(60);
        JsonNode fp16 = j.path("checks").path("fp16_round_nearest_even_exhaustive");
        // each generated double whose fp16 rounding is finite reports its distance to it; none exceeds half a gap
        assertThat(fp16.path("figures_reported").asLong()).isBetween(30L, 60L); // finite roundings only
        assertThat(fp16.path("worst_margin").asDouble()).isBetween(0.0, 1.0);
        assertThat(fp16.path("closest_input").asText()).isNotBlank();
        assertThat(dir.resolve("out/reports/kernels.cpu.json")).as("no seeded half ran, so no artifact").doesNotExist();
    }

    @Test
    void unknownPapersChecksAndCountsAreUsageErrors() {
        assertThat(Cli.run("stress", "--paper", "nope").err()).contains("unknown paper 'nope'");
        Cli check = Cli.run("stress", "--paper", "kernels", "--check", "nope", "--out", dir.resolve("o").toString());
        assertThat(check.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(check.err().strip()).isEqualTo("mechspec: --check nope is not a check of kernels");
        assertThat(Cli.run("stress", "--paper", "kernels", "--examples", "0").code()).isEqualTo(ExitCodes.BAD_INPUT);
    }
}
