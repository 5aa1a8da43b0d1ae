package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;

/**
 * A check an outside implementation computed nothing of is "not judged": kept out of {@code checks} (never claimed
 * true), named with its reason in the block, the summary, and left out of diff's comparison.
 */
@Tag("platform")
class NotJudgedTest {
    private static final Manifest KERNELS = ManifestLoader.load(Path.of("contracts/kernels.json"));

    private static JsonNode entry(String check, long seed, String notJudged) throws Exception {
        var n = PaperRun.JSON.createObjectNode().put("paper", "kernels").put("check", check).put("seed", seed)
                .put("backend", "some-worker").put("device", "some-worker 1.0");
        n.putObject("metrics");
        if (notJudged != null) {
            n.put(PaperRun.NOT_JUDGED, notJudged);
        }
        return n;
    }

    private static PaperRun run() throws Exception {
        PaperRun run = new PaperRun("kernels", "some-worker");
        run.add(entry("attention_fp64_flash_rule", 42, null), true);
        run.add(entry("rng_pinned_test_vector", 42, "calls no operation of the implementation"), true);
        run.add(entry("rng_pinned_test_vector", 43, "calls no operation of the implementation"), true);
        run.add(entry("attention_fp64_flash_rule", 43, "attention (f64) not served"), true);
        run.add(entry("attention_fp64_flash_rule", 43, null), true); // a judged invocation outweighs a not-judged one
        run.propertyNotJudged("rng_pinned_test_vector", "calls no operation of the implementation");
        return run;
    }

    @Test
    void theBlockNamesEachNotJudgedCheckAndRoundTrips() throws Exception {
        PaperRun run = run();
        JsonNode block = run.toJson();
        assertThat(block.path("seeds").path("42").path("checks").has("rng_pinned_test_vector")).isFalse();
        assertThat(block.path("seeds").path("42").path("checks").path("attention_fp64_flash_rule").asBoolean()).isTrue();
        assertThat(block.path("seeds").path("42").path("not_judged").path("rng_pinned_test_vector").asText())
                .isEqualTo("calls no operation of the implementation");
        assertThat(block.path("seeds").path("43").path("not_judged").has("attention_fp64_flash_rule")).isFalse();
        assertThat(block.path("property_not_judged").path("rng_pinned_test_vector").asText()).isNotEmpty();
        assertThat(run.verdict(42, "rng_pinned_test_vector")).isNull();
        assertThat(PaperRun.fromJson(block).toJson()).isEqualTo(block);
    }

    @Test
    void aRunWithoutNotJudgedChecksWritesNoNewKey() throws Exception {
        PaperRun run = new PaperRun("kernels", "cpu");
        run.add(entry("rng_pinned_test_vector", 42, null), true);
        run.propertyOutcome("rng_pinned_test_vector", true);
        assertThat(run.toJson().toString()).doesNotContain("not_judged");
    }

    @Test
    void theSummaryCountsHeldFailedAndNotJudgedAndGivesEachReason() throws Exception {
        PaperRun run = run();
        String s = RunSummary.render(List.of(run), p -> KERNELS, Path.of("out/reports"), Path.of("out/plots"), Map.of(),
                Path.of("target/allure-results"));
        assertThat(s).contains("1 of 2 checks that ran held on every seed [42, 43], 0 failed, 1 not judged")
                .contains("- – rng_pinned_test_vector: 42 – 43 –; not judged: calls no operation of the implementation");
    }

    @Test
    void aFailedPropertyHalfIsMarkedWithItsShrunkCaseAndReplay() throws Exception {
        PaperRun run = run();
        run.propertyOutcome("attention_fp64_flash_rule", false);
        run.propertyFailures.put("attention_fp64_flash_rule", RunSummary.propertyFailure(
                "Property falsified after 1 example(s) \nSmallest found falsifying value(s) :-\n{1, 1, 0}\nCause was :-\n"
                        + "java.lang.AssertionError: x = 1 > 0\nOther found falsifying value(s) :- \n{2, 1, 0}\n \nSeed was 7",
                "`mechspec run --paper kernels --property-seed 7`"));
        String s = RunSummary.render(List.of(run), p -> KERNELS, Path.of("out/reports"), Path.of("out/plots"), Map.of(),
                Path.of("target/allure-results"));
        assertThat(s).contains("- ✗ attention_fp64_flash_rule: 42 ✗ 43 ✗; property half failed: smallest falsifying case {1, 1, 0}"
                + " — java.lang.AssertionError: x = 1 > 0; replay: `mechspec run --paper kernels --property-seed 7`");
    }

    @Test
    void diffComparesNoVerdictWhereOneSideJudgedNothing() throws Exception {
        PaperRun reference = new PaperRun("kernels", "cpu");
        for (long seed : List.of(42L, 43L)) {
            reference.add(entry("rng_pinned_test_vector", seed, null), true);
            reference.add(entry("attention_fp64_flash_rule", seed, null), true);
        }
        assertThat(ArtifactDiff.compare(KERNELS, run(), reference)).noneMatch(f -> f.contains("rng_pinned_test_vector"));
    }
}
