package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code mechspec bench --implementation}: the mechanics at a small size (no time asserted). The NumPy reference's
 * decode holds every call, its replay and the floor; the corpus's worker that answers from the output it kept for a
 * cache, and one that skips the quantized groups, are rejected with the figure, although both are fast.
 */
@Tag("worker")
@Tag("cli")
class ImplementationBenchTest {
    private static final Path WORKERS = Path.of("src/test/worker").toAbsolutePath();
    private static final Path REFERENCE = Path.of("src/main/worker/python/reference_worker.py").toAbsolutePath();

    @TempDir
    Path dir;

    @Test
    void theReferenceWorkersDecodeIsTimedAndHoldsEveryCall() throws Exception {
        Cli r = Cli.run("bench", "--implementation", "python3 " + REFERENCE, "--tokens", "600", "--calls", "3", "--out", dir.toString());
        assertThat(r.code()).as("%s", r).isZero();
        JsonNode j = new ObjectMapper().readTree(dir.resolve("bench.numpy-reference.json").toFile());
        assertThat(j.get("copy_bandwidth_gb_s").asDouble()).isPositive();
        assertThat(j.get("results")).hasSize(2);
        for (JsonNode row : j.get("results")) {
            assertThat(row.get("all_outputs_correct").asBoolean()).as("%s", row).isTrue();
            assertThat(row.get("replay_bit_identical").asBoolean()).as("%s", row).isTrue();
            assertThat(row.get("below_floor").asBoolean()).as("%s", row).isFalse();
            assertThat(row.get("floor_ms").asDouble()).isPositive().isLessThanOrEqualTo(row.get("ms_per_call_min").asDouble());
            assertThat(row.get("ms_per_call_min").asDouble()).isLessThanOrEqualTo(row.get("ms_per_call_median").asDouble());
            assertThat(row.get("calls").asInt()).isEqualTo(3);
        }
        JsonNode speedup = j.get("packed_speedup").get(0);
        assertThat(speedup.get("byte_ratio_ceiling").asDouble()).isGreaterThan(1);
        assertThat(j.get("findings")).isEmpty();
    }

    /** Right but not bound by memory: its packed decode passes the byte ratio by far, a note and no fault. */
    @Test
    void aRightWorkerSlowOnTheFp16CacheHoldsWithANote() throws Exception {
        Cli r = Cli.run("bench", "--implementation", "python3 " + WORKERS.resolve("slow_fp16_decode_worker.py"), "--tokens", "600", "--calls", "3",
                "--out", dir.toString());
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(r.out()).contains("note: 600 tokens: packed decode").contains("beyond the byte ratio").doesNotContain("finding:");
        JsonNode j = new ObjectMapper().readTree(dir.resolve("bench.slow-fp16-decode.json").toFile());
        assertThat(j.get("findings")).isEmpty();
        assertThat(j.get("packed_speedup").get(0).get("within_ceiling").asBoolean()).isFalse();
    }

    @Test
    void aWorkerThatAnswersFromItsOwnCachedOutputsIsRejected() throws Exception {
        Cli r = Cli.run("bench", "--implementation", "python3 " + WORKERS.resolve("corpus/wrong_decode_reuses_output.py"), "--tokens", "600", "--calls", "3",
                "--out", dir.toString());
        assertThat(r.code()).as("%s", r).isEqualTo(ExitCodes.FINDINGS);
        assertThat(r.out()).contains("finding: packed cache, 600 tokens: an output off mechspec's decode")
                .contains("finding: fp16 cache, 600 tokens: an output off mechspec's decode");
    }

    @Test
    void aWorkerThatSkipsTheQuantizedGroupsIsRejected() throws Exception {
        Cli r = Cli.run("bench", "--implementation", "python3 " + WORKERS.resolve("lazy_decode_worker.py"), "--tokens", "600", "--calls", "3",
                "--out", dir.toString());
        assertThat(r.code()).as("%s", r).isEqualTo(ExitCodes.FINDINGS);
        assertThat(r.out()).contains("finding: packed cache, 600 tokens: an output off mechspec's decode");
        JsonNode j = new ObjectMapper().readTree(dir.resolve("bench.lazy-decode.json").toFile());
        assertThat(j.get("findings")).hasSize(1);
    }

    @Test
    void aWorkerThatDoesNotServeDecodeIsRefusedInOneLine() {
        Cli r = Cli.run("bench", "--implementation", "python3 " + WORKERS.resolve("zero_attention_worker.py"), "--out", dir.toString());
        assertThat(r.code()).as("%s", r).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).contains("does not serve pnmix.decode (f32): nothing of it to time");
        assertThat(dir).isEmptyDirectory();
    }
}
