package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.compute.Rng;
import org.mechspec.data.TokenBlocks;
import picocli.CommandLine;

/**
 * training.json is the reproducible record the OAL manifest pins by SHA-256: rerunning Pretrain used to rewrite it
 * with that run's wall times (and thread count and JVM), so the next build failed the OAL tests. Those now go to
 * training-log.json, which nothing pins.
 */
@Tag("model")
class PretrainRecordTest {
    /** Words of field names only a run log may have: they differ between runs of the same arguments on the same data. */
    static final Set<String> RUN_ONLY = Set.of("wall", "time", "seconds", "thread", "threads", "java", "jvm", "machine", "host",
            "os", "processors", "date", "timestamp");

    static boolean runOnly(String path) {
        String name = path.substring(path.lastIndexOf('/') + 1).toLowerCase(java.util.Locale.ROOT);
        return Arrays.stream(name.split("[_\\-]")).anyMatch(RUN_ONLY::contains);
    }

    @TempDir
    Path dir;

    @Test
    void theRecordPretrainWritesHoldsNoWallTimeOrMachineField() throws Exception {
        Pretrain p = new Pretrain();
        new CommandLine(p).parseArgs("--out", dir.toString(), "--steps", "3", "--block", "9");
        Qwen2Config config = new Qwen2Config(256, 16, 24, 2, 4, 2, 8, 10000.0, 1e-6, true);
        Qwen2Model model = Qwen2Model.initialized(config, Precision.FP32, new Rng(7), Qwen2Model.INIT_STD);
        Checkpoint.save(model, dir, DType.F32);
        byte[] text = new byte[9 * 20];
        new java.util.Random(3).nextBytes(text);
        TokenBlocks blocks = TokenBlocks.ofBytes(text, 9);
        ArrayNode curve = new ObjectMapper().createArrayNode();
        curve.addObject().put("step", 3).put("mean_loss", 5.5);
        double[] nll = {2.0, 2.5, 3.0};
        double[] unigram = {5.0, 5.5, 5.25};

        JsonNode record = p.record(config, text, blocks, blocks, curve, 1, model, new int[] {0, 1, 2}, nll, unigram,
                new int[] {0}, new double[] {2.0});
        assertThat(fieldPaths(record, "").stream().filter(PretrainRecordTest::runOnly))
                .as("run-only fields in the record").isEmpty();
        assertThat(record.at("/seed").longValue()).isEqualTo(20240607L);
        assertThat(record.at("/training/loss_curve/0/mean_loss").doubleValue()).isEqualTo(5.5);

        // The same inputs give the same bytes, whatever the thread count says.
        String was = System.setProperty("mechspec.threads", "7");
        try {
            assertThat(Pretrain.json(p.record(config, text, blocks, blocks, curve, 1, model, new int[] {0, 1, 2}, nll, unigram,
                    new int[] {0}, new double[] {2.0}))).isEqualTo(Pretrain.json(p.record(config, text, blocks, blocks, curve, 1,
                    model, new int[] {0, 1, 2}, nll, unigram, new int[] {0}, new double[] {2.0})));
        } finally {
            if (was == null) {
                System.clearProperty("mechspec.threads");
            } else {
                System.setProperty("mechspec.threads", was);
            }
        }
    }

    @Test
    void theRunLogTakesTheWallTimesAndTheMachine() {
        JsonNode log = Pretrain.runLog(12.5, 3.25);
        assertThat(log.at("/training/wall_time_seconds").doubleValue()).isEqualTo(12.5);
        assertThat(log.at("/evaluation/wall_time_seconds").doubleValue()).isEqualTo(3.25);
        assertThat(log.at("/training/threads").isInt()).isTrue();
        assertThat(log.path("java").asText()).isNotBlank();
        assertThat(log.path("machine").asText()).isNotBlank();
    }

    @Test
    void theCommittedRecordIsTheReproduciblePartOnly() throws Exception {
        Path dir = Checkpoint.tinyQwen2();
        JsonNode record = new ObjectMapper().readTree(Files.readString(dir.resolve(Pretrain.RECORD_FILE)));
        assertThat(fieldPaths(record, "").stream().filter(PretrainRecordTest::runOnly))
                .isEmpty();
        // Byte for byte what Pretrain's writer makes of it, so a rerun can give the same SHA-256.
        assertThat(new String(Pretrain.json((com.fasterxml.jackson.databind.node.ObjectNode) record), java.nio.charset.StandardCharsets.UTF_8))
                .isEqualTo(Files.readString(dir.resolve(Pretrain.RECORD_FILE)));
        JsonNode log = new ObjectMapper().readTree(Files.readString(dir.resolve(Pretrain.LOG_FILE)));
        assertThat(log.at("/training/wall_time_seconds").doubleValue()).isPositive();
    }

    private static List<String> fieldPaths(JsonNode node, String at) {
        List<String> out = new ArrayList<>();
        if (node.isObject()) {
            node.fields().forEachRemaining(e -> {
                out.add(at + "/" + e.getKey());
                out.addAll(fieldPaths(e.getValue(), at + "/" + e.getKey()));
            });
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                out.addAll(fieldPaths(node.get(i), at + "/" + i));
            }
        }
        return out;
    }
}
