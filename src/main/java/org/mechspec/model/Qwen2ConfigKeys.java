package org.mechspec.model;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Which keys of a Hugging Face Qwen2 {@code config.json} this implementation knows. A key is either read into
 * {@link Qwen2Config}, checked to have the one value this implementation computes, or bookkeeping that does not
 * change the computation. Any other key is refused by name: a newer or different config may add a switch that
 * changes the architecture, and silently ignoring it would run a different model than the checkpoint's.
 */
final class Qwen2ConfigKeys {
    /** Keys whose values become {@link Qwen2Config}'s fields. */
    static final Set<String> READ = Set.of("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
            "num_attention_heads", "num_key_value_heads", "max_position_embeddings", "rope_theta", "rms_norm_eps",
            "tie_word_embeddings");

    /**
     * Keys that do not change the forward pass: token ids and generation settings, the initializer's scale, the
     * writer's versions and storage dtype (the weights' dtype is the safetensors header's), and the sliding-window
     * size and layer count, which Hugging Face reads only when use_sliding_window is true (refused below).
     */
    static final Set<String> BOOKKEEPING = Set.of("_name_or_path", "bos_token_id", "eos_token_id", "pad_token_id",
            "initializer_range", "transformers_version", "torch_dtype", "dtype", "use_cache", "sliding_window",
            "max_window_layers");

    /** A key that may be present only with a value this implementation computes (absent means that value too). */
    private record CheckedKey(String name, Predicate<JsonNode> supported, String supportedValue, String why) {
    }

    private static final Map<String, CheckedKey> CHECKED = byName(
            new CheckedKey("model_type", text("qwen2"), "\"qwen2\"", "this is a Qwen2 implementation"),
            new CheckedKey("architectures",
                    n -> n.isArray() && n.size() == 1 && "Qwen2ForCausalLM".equals(n.get(0).textValue()),
                    "[\"Qwen2ForCausalLM\"]", "the model is a causal LM with a vocabulary head"),
            new CheckedKey("hidden_act", text("silu"), "\"silu\"", "the MLP is SwiGLU"),
            new CheckedKey("rope_scaling", JsonNode::isNull, "null", "RoPE is applied unscaled"),
            new CheckedKey("use_sliding_window", n -> n.isBoolean() && !n.booleanValue(), "false",
                    "every layer attends to all earlier positions"),
            new CheckedKey("attention_dropout", n -> n.isNumber() && n.doubleValue() == 0.0, "0",
                    "attention has no dropout (evaluation semantics)"),
            new CheckedKey("use_mrope", n -> n.isBoolean() && !n.booleanValue(), "false",
                    "positions are one-dimensional (multimodal RoPE is Qwen2-VL's)"),
            new CheckedKey("attention_bias", n -> n.isBoolean() && n.booleanValue(), "true",
                    "q/k/v projections have biases, o_proj none"),
            new CheckedKey("mlp_bias", n -> n.isBoolean() && !n.booleanValue(), "false",
                    "the MLP projections have no biases"),
            new CheckedKey("layer_types", Qwen2ConfigKeys::allFullAttention, "[\"full_attention\", ...]",
                    "every layer attends to all earlier positions"),
            // Consistency with hidden_size / num_attention_heads is checked by Qwen2Config once both are read.
            new CheckedKey("head_dim", n -> n.isNull() || n.canConvertToInt() && n.isIntegralNumber(), "an integer",
                    "it must equal hidden_size / num_attention_heads"));

    private Qwen2ConfigKeys() {
    }

    /**
     * Refuses a config with a key this implementation does not know or a checked key with another value; the
     * message names the key.
     */
    static void requireSupported(JsonNode root) {
        List<String> unknown = new ArrayList<>();
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            CheckedKey rule = CHECKED.get(key);
            if (rule != null) {
                JsonNode value = root.get(key);
                if (!rule.supported().test(value)) {
                    throw new IllegalArgumentException("key '" + key + "' is " + value + ", this Qwen2 implementation"
                            + " supports only " + rule.supportedValue() + " (" + rule.why() + ")");
                }
            } else if (!READ.contains(key) && !BOOKKEEPING.contains(key)) {
                unknown.add(key);
            }
        }
        if (unknown.size() == 1) {
            throw new IllegalArgumentException("key '" + unknown.get(0) + "' is not known to this Qwen2 implementation"
                    + " and may change the architecture");
        }
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("keys '" + String.join("', '", unknown) + "' are not known to this"
                    + " Qwen2 implementation and may change the architecture");
        }
    }

    private static Map<String, CheckedKey> byName(CheckedKey... keys) {
        Map<String, CheckedKey> out = new LinkedHashMap<>();
        for (CheckedKey k : keys) {
            out.put(k.name(), k);
        }
        return out;
    }

    private static Predicate<JsonNode> text(String expected) {
        return n -> n.isTextual() && n.textValue().equals(expected);
    }

    private static boolean allFullAttention(JsonNode n) {
        if (!n.isArray()) {
            return false;
        }
        for (JsonNode t : n) {
            if (!"full_attention".equals(t.textValue())) {
                return false;
            }
        }
        return true;
    }
}
