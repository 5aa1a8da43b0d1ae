package org.mechspec.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The Hugging Face Qwen2 {@code config.json} fields this model uses. Head dimension = hidden_size /
 * num_attention_heads, as in Qwen2. Other keys of a real config are accepted when {@link Qwen2ConfigKeys} knows
 * them (bookkeeping, or a switch set to what this architecture computes); any other key is refused by name.
 */
public record Qwen2Config(int vocabSize, int hiddenSize, int intermediateSize, int numHiddenLayers,
                          int numAttentionHeads, int numKeyValueHeads, int maxPositionEmbeddings,
                          double ropeTheta, double rmsNormEps, boolean tieWordEmbeddings) {

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    public Qwen2Config {
        requirePositive("vocab_size", vocabSize);
        requirePositive("hidden_size", hiddenSize);
        requirePositive("intermediate_size", intermediateSize);
        requirePositive("num_hidden_layers", numHiddenLayers);
        requirePositive("num_attention_heads", numAttentionHeads);
        requirePositive("num_key_value_heads", numKeyValueHeads);
        requirePositive("max_position_embeddings", maxPositionEmbeddings);
        if (hiddenSize % numAttentionHeads != 0) {
            throw new IllegalArgumentException("hidden_size " + hiddenSize + " is not a multiple of num_attention_heads "
                    + numAttentionHeads);
        }
        if (numAttentionHeads % numKeyValueHeads != 0) {
            throw new IllegalArgumentException("num_attention_heads " + numAttentionHeads
                    + " is not a multiple of num_key_value_heads " + numKeyValueHeads);
        }
        if ((hiddenSize / numAttentionHeads) % 2 != 0) {
            throw new IllegalArgumentException("head dimension " + hiddenSize / numAttentionHeads
                    + " is odd: half-split RoPE needs an even head dimension");
        }
        if (!(ropeTheta > 1) || Double.isInfinite(ropeTheta)) {
            throw new IllegalArgumentException("rope_theta must be finite and > 1, got " + ropeTheta);
        }
        if (!(rmsNormEps > 0) || Double.isInfinite(rmsNormEps)) {
            throw new IllegalArgumentException("rms_norm_eps must be finite and > 0, got " + rmsNormEps);
        }
    }

    public int headDim() {
        return hiddenSize / numAttentionHeads;
    }

    /** Width of the q projection's output (= hidden_size). */
    public int queryDim() {
        return numAttentionHeads * headDim();
    }

    /** Width of the k and v projections' outputs. */
    public int kvDim() {
        return numKeyValueHeads * headDim();
    }

    public static Qwen2Config read(Path file) {
        JsonNode root;
        try {
            root = JSON.readTree(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalArgumentException(file + " is not readable JSON: " + e.getMessage(), e);
        }
        try {
            return fromJson(root);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    public static Qwen2Config fromJson(JsonNode root) {
        if (root == null || !root.isObject()) {
            throw new IllegalArgumentException("config must be a JSON object");
        }
        Qwen2ConfigKeys.requireSupported(root);
        Qwen2Config c = new Qwen2Config(intField(root, "vocab_size"), intField(root, "hidden_size"),
                intField(root, "intermediate_size"), intField(root, "num_hidden_layers"),
                intField(root, "num_attention_heads"), intField(root, "num_key_value_heads"),
                intField(root, "max_position_embeddings"), doubleField(root, "rope_theta"),
                doubleField(root, "rms_norm_eps"), booleanField(root, "tie_word_embeddings"));
        if (root.hasNonNull("head_dim") && root.get("head_dim").intValue() != c.headDim()) {
            throw new IllegalArgumentException("key 'head_dim' is " + root.get("head_dim") + ", but this Qwen2"
                    + " implementation derives it as hidden_size / num_attention_heads = " + c.headDim());
        }
        if (root.has("layer_types") && root.get("layer_types").size() != c.numHiddenLayers()) {
            throw new IllegalArgumentException("key 'layer_types' names " + root.get("layer_types").size()
                    + " layers, num_hidden_layers is " + c.numHiddenLayers());
        }
        return c;
    }

    /** The config as Hugging Face writes it for Qwen2ForCausalLM. */
    public ObjectNode toJson() {
        ObjectNode o = JSON.createObjectNode();
        o.putArray("architectures").add("Qwen2ForCausalLM");
        o.put("model_type", "qwen2");
        o.put("hidden_act", "silu");
        o.put("vocab_size", vocabSize);
        o.put("hidden_size", hiddenSize);
        o.put("intermediate_size", intermediateSize);
        o.put("num_hidden_layers", numHiddenLayers);
        o.put("num_attention_heads", numAttentionHeads);
        o.put("num_key_value_heads", numKeyValueHeads);
        o.put("max_position_embeddings", maxPositionEmbeddings);
        o.put("rope_theta", ropeTheta);
        o.put("rms_norm_eps", rmsNormEps);
        o.put("tie_word_embeddings", tieWordEmbeddings);
        o.putNull("rope_scaling");
        o.put("use_sliding_window", false);
        o.put("attention_dropout", 0.0);
        o.put("torch_dtype", "float32");
        return o;
    }

    public void write(Path file) throws IOException {
        Files.writeString(file, JSON.writeValueAsString(toJson()) + "\n", StandardCharsets.UTF_8);
    }

    private static int intField(JsonNode root, String name) {
        JsonNode n = root.get(name);
        if (n == null || !n.canConvertToInt() || !n.isIntegralNumber()) {
            throw new IllegalArgumentException("field " + name + " is missing or not an integer: " + n);
        }
        return n.intValue();
    }

    private static double doubleField(JsonNode root, String name) {
        JsonNode n = root.get(name);
        if (n == null || !n.isNumber()) {
            throw new IllegalArgumentException("field " + name + " is missing or not a number: " + n);
        }
        return n.doubleValue();
    }

    private static boolean booleanField(JsonNode root, String name) {
        JsonNode n = root.get(name);
        if (n == null || !n.isBoolean()) {
            throw new IllegalArgumentException("field " + name + " is missing or not a boolean: " + n);
        }
        return n.booleanValue();
    }

    private static void requirePositive(String name, int v) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + v);
        }
    }
}
