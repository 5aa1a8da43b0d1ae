package org.mechspec.model;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.mechspec.compute.Rng;

/**
 * Writes, at test time, a random-weight checkpoint folder laid out as Hugging Face ships Qwen/Qwen2.5-0.5B:
 * config.json with exactly the real config's keys (sizes reduced), and a bf16 model.safetensors with q/k/v
 * biases, tied embeddings (no lm_head tensor) and tensors stored in name order, as the Python safetensors
 * library stores them. Tensor names and shapes are spelled out here from the Hugging Face layout, not taken from
 * {@link Qwen2Model}, so loading the folder tests the model's naming too. Same seed → same bytes.
 */
public final class RandomQwenCheckpoint {
    /** The config.json of Qwen/Qwen2.5-0.5B, byte for byte (test resource). */
    static final String REAL_CONFIG_RESOURCE = "qwen2.5-0.5b/config.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The sizes in which the generated folder differs from the real model. */
    public record Dims(int layers, int hidden, int heads, int kvHeads, int intermediate, int vocab) {
        int headDim() {
            return hidden / heads;
        }
    }

    /** Qwen2.5-0.5B reduced in depth and width (head dim 16), with its real vocabulary of 151936. */
    static final Dims REDUCED = new Dims(2, 64, 4, 2, 128, 151936);
    /**
     * Deep enough for OAL's converted layer 4, with Qwen2.5-0.5B's head dim 64 (groups of 4 / 12 / 48 dimensions),
     * GQA (two query heads per KV head) and the real vocabulary: the checkpoint protocol's end-to-end case.
     */
    public static final Dims OAL_PROTOCOL = new Dims(5, 128, 2, 1, 256, 151936);
    /** Qwen2.5-0.5B's own sizes: for measuring the checkpoint protocol on the real shape (bench.QwenShapedCheckpoint). */
    public static final Dims QWEN25_05B = new Dims(24, 896, 14, 2, 4864, 151936);
    /** Small enough for finite differences over every element (and for cheap bad-input cases). */
    static final Dims TINY = new Dims(2, 16, 4, 2, 24, 11);

    private RandomQwenCheckpoint() {
    }

    /** Writes config.json and model.safetensors (bf16) to {@code dir}; returns {@code dir}. */
    public static Path write(Path dir, Dims dims, long seed) throws IOException {
        writeConfig(dir, config(dims));
        writeWeights(dir, tensors(dims, seed));
        return dir;
    }

    /** The real config as a JSON object. */
    static ObjectNode realConfig() {
        try (InputStream in = RandomQwenCheckpoint.class.getResourceAsStream(REAL_CONFIG_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("test resource " + REAL_CONFIG_RESOURCE + " is missing");
            }
            return (ObjectNode) JSON.readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The real config with the reduced sizes; every other key and value as shipped (rope θ 1e6, tied, ...). */
    static ObjectNode config(Dims dims) {
        ObjectNode c = realConfig();
        c.put("num_hidden_layers", dims.layers());
        c.put("max_window_layers", dims.layers());
        c.put("hidden_size", dims.hidden());
        c.put("num_attention_heads", dims.heads());
        c.put("num_key_value_heads", dims.kvHeads());
        c.put("intermediate_size", dims.intermediate());
        c.put("vocab_size", dims.vocab());
        return c;
    }

    static void writeConfig(Path dir, ObjectNode config) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(Checkpoint.CONFIG_FILE),
                JSON.writerWithDefaultPrettyPrinter().writeValueAsString(config) + "\n", StandardCharsets.UTF_8);
    }

    /** Writes the tensors to model.safetensors in bf16, with the metadata Hugging Face writes. */
    static void writeWeights(Path dir, List<SafeTensorsWriter.Named> tensors) throws IOException {
        SafeTensorsWriter.write(dir.resolve(Checkpoint.WEIGHTS_FILE), tensors, DType.BF16, Map.of("format", "pt"));
    }

    /**
     * The random tensors (fp32, before bf16 rounding) in name order, drawn one after another, row-major, from
     * Rng(seed): matrices N(0, 1/in_features), so activations stay of order one at any width; biases N(0, 0.1²);
     * norm weights 1 + N(0, 0.1²).
     */
    static List<SafeTensorsWriter.Named> tensors(Dims dims, long seed) {
        List<SafeTensorsWriter.Named> shapes = new ArrayList<>();
        int h = dims.hidden();
        int kv = dims.kvHeads() * dims.headDim();
        shapes.add(zeros("model.embed_tokens.weight", dims.vocab(), h));
        shapes.add(zeros("model.norm.weight", h));
        for (int l = 0; l < dims.layers(); l++) {
            String p = "model.layers." + l + ".";
            shapes.add(zeros(p + "self_attn.q_proj.weight", h, h));
            shapes.add(zeros(p + "self_attn.q_proj.bias", h));
            shapes.add(zeros(p + "self_attn.k_proj.weight", kv, h));
            shapes.add(zeros(p + "self_attn.k_proj.bias", kv));
            shapes.add(zeros(p + "self_attn.v_proj.weight", kv, h));
            shapes.add(zeros(p + "self_attn.v_proj.bias", kv));
            shapes.add(zeros(p + "self_attn.o_proj.weight", h, h));
            shapes.add(zeros(p + "mlp.gate_proj.weight", dims.intermediate(), h));
            shapes.add(zeros(p + "mlp.up_proj.weight", dims.intermediate(), h));
            shapes.add(zeros(p + "mlp.down_proj.weight", h, dims.intermediate()));
            shapes.add(zeros(p + "input_layernorm.weight", h));
            shapes.add(zeros(p + "post_attention_layernorm.weight", h));
        }
        shapes.sort(Comparator.comparing(SafeTensorsWriter.Named::name));
        Rng rng = new Rng(seed);
        for (SafeTensorsWriter.Named n : shapes) {
            Tensor t = n.tensor();
            for (int i = 0; i < t.size(); i++) {
                t.set(i, switch (kind(n)) {
                    case MATRIX -> rng.normal() / Math.sqrt(t.dim(1));
                    case BIAS -> 0.1 * rng.normal();
                    case NORM -> 1.0 + 0.1 * rng.normal();
                });
            }
        }
        return shapes;
    }

    private enum Kind { MATRIX, BIAS, NORM }

    private static Kind kind(SafeTensorsWriter.Named n) {
        if (n.tensor().shape().length == 2) {
            return Kind.MATRIX;
        }
        return n.name().endsWith("norm.weight") ? Kind.NORM : Kind.BIAS;
    }

    private static SafeTensorsWriter.Named zeros(String name, int... shape) {
        return new SafeTensorsWriter.Named(name, Tensor.zeros(Precision.FP32, shape));
    }
}
