package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker that computes nothing a check uses gets no verdict on it: the check is "not judged", with the reason, in
 * the artifact, the summary and the counts, never held. And a falsified property half's summary line gives a replay
 * command that reproduces its shrunk case.
 */
@Tag("worker")
@Order(Integer.MAX_VALUE)
class NotJudgedVerdictsTest {
    private static final Path WORKERS = Path.of("src/test/worker").toAbsolutePath();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static ChildMain run(Path out, String worker, String paper, String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of("run", "--implementation", "python3 " + WORKERS.resolve(worker), "--paper", paper,
                "--out", out.toString(), "--quiet", "--data-dir",
                Path.of(System.getProperty("mechspec.data.dir", "../shared/data")).toAbsolutePath().toString()));
        args.addAll(List.of(more));
        return ChildMain.run(Path.of("").toAbsolutePath(), 15, Main.class.getName(), List.of(), args.toArray(String[]::new));
    }

    /**
     * Attention alone on fold-bias: every check about one of the paper's own operations (each check's {@code judges})
     * is not judged, although its pipeline called the worker's attention; the checks of the whole pipeline are.
     */
    @Test
    void aCheckTheWorkerServesNothingOfIsNotJudged() throws Exception {
        ChildMain r = run(dir.resolve("out"), "attention_only_worker.py", "fold-bias", "--seeds", "42");
        assertThat(r.code()).as(r.out()).isZero();
        Path artifact = dir.resolve("out/reports/fold-bias.attention-only.json");
        JsonNode seed = JSON.readTree(artifact.toFile()).path("mechspec").path("seeds").path("42");
        assertThat(seed.path("not_judged").path("fold_kernel_matches_cpu_twin").asText()).isEqualTo("foldbias.rank_one_fold not served");
        assertThat(seed.path("not_judged").path("nnls_kkt_conditions").asText()).isEqualTo("foldbias.nnls not served");
        neverHeld(seed);
        assertThat(r.out()).contains("- – fold_kernel_matches_cpu_twin: 42 –; not judged: foldbias.rank_one_fold not served")
                .contains("- – nnls_kkt_conditions: 42 –; not judged: foldbias.nnls not served")
                .contains("- – nnls_kkt_conditions (property half): not judged: foldbias.nnls not served")
                .contains("- – compaction_selects_top_weight_keys: 42 –; not judged: foldbias.select_keys not served")
                .doesNotContain("- – compaction_output_fidelity")
                .containsPattern("contracts: \\d+ passed, 0 failed, 20 not judged, 0 skipped");
        assertThat(Cli.run("validate", artifact.toString()).code()).isZero();
        Cli diff = Cli.run("diff", "--seeds", "42", artifact.toString(), "reports/fold-bias.cpu.json");
        assertThat(diff.code()).as(diff.toString()).isZero();
    }

    /**
     * The zero-attention worker on kernels: the RNG check calls nothing of it (not judged, on every seed and in merge);
     * its falsified property's summary line replays, with --property-seed, to the same shrunk case.
     */
    @Test
    void aFalsifiedPropertyHalfReplaysFromItsSummaryLine() throws Exception {
        ChildMain first = run(dir.resolve("a"), "zero_attention_worker.py", "kernels", "--seeds", "42");
        assertThat(first.code()).as(first.out()).isEqualTo(ExitCodes.FINDINGS);
        JsonNode a = JSON.readTree(dir.resolve("a/reports/kernels.zero-attention.json").toFile()).path("mechspec");
        assertThat(a.path("seeds").path("42").path("not_judged").path("rng_pinned_test_vector").asText())
                .isEqualTo("calls no operation of the implementation");
        neverHeld(a.path("seeds").path("42"));
        Matcher line = Pattern.compile("- ✗ attention_fp64_flash_rule[^\\n]*property half failed: smallest falsifying case"
                + " ([^\\n]*?) — [^\\n]*--property-seed (-?\\d+)").matcher(first.out());
        assertThat(line.find()).as(first.out()).isTrue();
        String shrunk = line.group(1);
        String seed = line.group(2);

        ChildMain replay = run(dir.resolve("b"), "zero_attention_worker.py", "kernels", "--seeds", "43", "--property-seed", seed);
        assertThat(replay.out()).contains("property half failed: smallest falsifying case " + shrunk).contains("--property-seed " + seed);

        Path merged = dir.resolve("merged.json");
        Cli merge = Cli.run("merge", dir.resolve("a/reports/kernels.zero-attention.json").toString(),
                dir.resolve("b/reports/kernels.zero-attention.json").toString(), "--out", merged.toString());
        assertThat(merge.code()).as(merge.toString()).isZero();
        JsonNode m = JSON.readTree(merged.toFile()).path("mechspec");
        for (String s : List.of("42", "43")) {
            assertThat(m.path("seeds").path(s).path("not_judged").has("rng_pinned_test_vector")).as(s).isTrue();
            neverHeld(m.path("seeds").path(s));
        }
        // The merge renders again as validate does: its only findings are the worker's failed checks.
        Cli validate = Cli.run("validate", merged.toString());
        assertThat(validate.toString()).contains("check failed").doesNotContain("not_judged");
    }

    private static void neverHeld(JsonNode seed) {
        seed.path("not_judged").fieldNames().forEachRemaining(check -> assertThat(seed.path("checks").has(check)).as(check).isFalse());
    }
}
