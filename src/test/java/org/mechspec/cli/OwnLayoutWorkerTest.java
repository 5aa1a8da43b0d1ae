package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * PROTOCOL.md leaves a packed stream's bit order to the implementation: a right pn-mix implementation with its own
 * (MSB-first streams, src/test/worker/own_bit_order_worker.py) holds every check, as a user runs it; and a "packed"
 * cache that keeps fp16 values is still rejected by the check that names its fault, byte accounting.
 */
@Tag("worker")
class OwnLayoutWorkerTest {
    private static final Path WORKERS = Path.of("src/test/worker").toAbsolutePath();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private static ChildMain run(Path out, String worker) throws Exception {
        return ChildMain.run(Path.of("").toAbsolutePath(), 15, Main.class.getName(), List.of(), "run", "--implementation",
                "python3 " + WORKERS.resolve(worker), "--paper", "pn-mix", "--seeds", "42", "--out", out.toString(), "--quiet",
                "--data-dir", Path.of(System.getProperty("mechspec.data.dir", "../shared/data")).toAbsolutePath().toString());
    }

    private static JsonNode seed42(Path out, String id) throws Exception {
        return JSON.readTree(out.resolve("reports/pn-mix." + id + ".json").toFile()).path("mechspec").path("seeds").path("42");
    }

    @Test
    void anImplementationWithItsOwnBitOrderHoldsEveryCheck() throws Exception {
        Path out = dir.resolve("own");
        ChildMain r = run(out, "own_bit_order_worker.py");
        assertThat(r.code()).as(r.out()).isZero();
        JsonNode checks = seed42(out, "own-bit-order").path("checks");
        assertThat(checks.size()).as("checks judged").isPositive();
        for (Map.Entry<String, JsonNode> c : checks.properties()) {
            assertThat(c.getValue().asBoolean(false)).as("%s: %s", c.getKey(), r.out()).isTrue();
        }
        // Every pn-mix check, the device-side twins included, judged it.
        JsonNode ours = JSON.readTree(Path.of("reports/pn-mix.cpu.json").toFile()).path("mechspec").path("seeds").path("42").path("checks");
        ours.fieldNames().forEachRemaining(name -> assertThat(checks.has(name)).as(name).isTrue());
        assertThat(checks.has("cuda_quantize_pack_bit_equal")).isTrue();
    }

    @Test
    void aCacheThatKeepsFp16ValuesIsStillRejectedByByteAccounting() throws Exception {
        Path out = dir.resolve("fp16");
        ChildMain r = run(out, "fp16_values_worker.py");
        assertThat(r.code()).as(r.out()).isEqualTo(ExitCodes.FINDINGS);
        assertThat(seed42(out, "fp16-values-cache").path("checks").path("byte_accounting_exact").asBoolean(true)).as(r.out()).isFalse();
        assertThat(r.out()).contains("byte_accounting_exact");
    }
}
