package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("model")
class Qwen2ConfigTest {
    /** Seed 004's file, which pins the SHA-256 of every file of the Qwen2.5-0.5B checkpoint. */
    static final String SEED_FILE = "fixtures/seeds/oal.004_29e8e1ddd5ac2b2e.json";

    /** Qwen/Qwen2.5-0.5B's config.json as Hugging Face ships it (test resource). */
    static String qwen25Config() {
        return RandomQwenCheckpoint.realConfig().toString();
    }

    @TempDir
    Path dir;

    /** The real config file on the test class path. */
    static Path realConfigFile() throws URISyntaxException {
        return Path.of(Qwen2ConfigTest.class.getResource(RandomQwenCheckpoint.REAL_CONFIG_RESOURCE).toURI());
    }

    @Test
    void theRealConfigIsTheFileTheSeedPins() throws IOException, URISyntaxException {
        JsonNode seed;
        try (InputStream in = getClass().getClassLoader().getResourceAsStream(SEED_FILE)) {
            seed = new ObjectMapper().readTree(in);
        }
        String pinned = seed.at("/checkpoint/files_sha256/config.json").textValue();
        assertThat(seed.at("/checkpoint/id").textValue()).isEqualTo("Qwen/Qwen2.5-0.5B");
        assertThat(CheckpointHashes.sha256(realConfigFile())).isEqualTo(pinned);
        assertThat(CheckpointHashes.require(realConfigFile().getParent(), Map.of("config.json", pinned)))
                .containsExactly(Map.entry("config.json", pinned));
    }

    @Test
    void readsTheRealQwen25ConfigWithExactlyItsFields() throws URISyntaxException {
        JsonNode raw = RandomQwenCheckpoint.realConfig();
        List<String> keys = new ArrayList<>();
        raw.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).containsExactlyInAnyOrder("architectures",
                "attention_dropout", "bos_token_id", "eos_token_id", "hidden_act", "hidden_size", "initializer_range",
                "intermediate_size", "max_position_embeddings", "max_window_layers", "model_type",
                "num_attention_heads", "num_hidden_layers", "num_key_value_heads", "rms_norm_eps", "rope_theta",
                "sliding_window", "tie_word_embeddings", "torch_dtype", "transformers_version", "use_cache",
                "use_mrope", "use_sliding_window", "vocab_size");
        // The keys that do not become record fields, with the values the real file has.
        assertThat(raw.get("architectures").toString()).isEqualTo("[\"Qwen2ForCausalLM\"]");
        assertThat(raw.get("attention_dropout").doubleValue()).isZero();
        assertThat(raw.get("bos_token_id").intValue()).isEqualTo(151643);
        assertThat(raw.get("eos_token_id").intValue()).isEqualTo(151643);
        assertThat(raw.get("hidden_act").textValue()).isEqualTo("silu");
        assertThat(raw.get("initializer_range").doubleValue()).isEqualTo(0.02);
        assertThat(raw.get("max_window_layers").intValue()).isEqualTo(24);
        assertThat(raw.get("model_type").textValue()).isEqualTo("qwen2");
        assertThat(raw.get("sliding_window").intValue()).isEqualTo(32768);
        assertThat(raw.get("torch_dtype").textValue()).isEqualTo("bfloat16");
        assertThat(raw.get("transformers_version").textValue()).isEqualTo("4.40.1");
        assertThat(raw.get("use_cache").booleanValue()).isTrue();
        assertThat(raw.get("use_mrope").booleanValue()).isFalse();
        assertThat(raw.get("use_sliding_window").booleanValue()).isFalse();

        Qwen2Config c = Qwen2Config.read(realConfigFile());
        assertThat(c).isEqualTo(new Qwen2Config(151936, 896, 4864, 24, 14, 2, 32768, 1e6, 1e-6, true));
        assertThat(c.headDim()).isEqualTo(64);
        assertThat(c.kvDim()).isEqualTo(128);
        assertThat(c.tieWordEmbeddings()).isTrue();
        assertThat(c.ropeTheta()).isEqualTo(1e6);
        Qwen2Model shell = Qwen2Model.zeros(new Qwen2Config(c.vocabSize() / 1024, 64, 128, 1, 14 / 7, 2, 64,
                c.ropeTheta(), c.rmsNormEps(), true), Precision.FP32);
        assertThat(shell.parameters()).extracting(Parameter::name).startsWith("model.embed_tokens.weight",
                "model.layers.0.self_attn.q_proj.weight", "model.layers.0.self_attn.q_proj.bias",
                "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.k_proj.bias",
                "model.layers.0.self_attn.v_proj.weight", "model.layers.0.self_attn.v_proj.bias",
                "model.layers.0.self_attn.o_proj.weight", "model.layers.0.mlp.gate_proj.weight",
                "model.layers.0.mlp.up_proj.weight", "model.layers.0.mlp.down_proj.weight",
                "model.layers.0.input_layernorm.weight", "model.layers.0.post_attention_layernorm.weight",
                "model.norm.weight").doesNotContain("lm_head.weight");
    }

    @Test
    void theTinyFixtureConfigAndWhatToJsonWritesLoad() throws IOException {
        Qwen2Config fixture = Qwen2Config.read(Checkpoint.tinyQwen2().resolve(Checkpoint.CONFIG_FILE));
        assertThat(fixture).isEqualTo(new Qwen2Config(256, 128, 256, 6, 4, 2, 64, 10000.0, 1e-6, true));
        assertThat(Qwen2Config.fromJson(fixture.toJson())).isEqualTo(fixture);
    }

    @Test
    void unknownKeysAreRefusedByName() throws IOException {
        ObjectMapper json = new ObjectMapper();
        ObjectNode node = (ObjectNode) json.readTree(qwen25Config());
        node.put("xyz", 1);
        assertThatThrownBy(() -> Qwen2Config.fromJson(node)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("key 'xyz' is not known to this Qwen2 implementation and may change the architecture");
        Files.writeString(dir.resolve("config.json"), node.toString());
        assertThatThrownBy(() -> Qwen2Config.read(dir.resolve("config.json"))).hasMessage(dir.resolve("config.json")
                + ": key 'xyz' is not known to this Qwen2 implementation and may change the architecture");
        // Qwen2-MoE's switches are real Hugging Face keys unknown here: all are named.
        ObjectNode moe = (ObjectNode) json.readTree(qwen25Config());
        moe.put("num_experts", 60);
        moe.put("moe_intermediate_size", 1408);
        assertThatThrownBy(() -> Qwen2Config.fromJson(moe))
                .hasMessageContaining("keys 'num_experts', 'moe_intermediate_size' are not known");
    }

    @Test
    void checkedKeysAcceptOnlyTheValueThisArchitectureComputes() throws IOException {
        ObjectMapper json = new ObjectMapper();
        String[][] refused = {
            {"use_sliding_window", "true"},
            {"use_sliding_window", "\"false\""},
            {"attention_dropout", "0.1"},
            {"use_mrope", "true"},
            {"rope_scaling", "{\"type\": \"yarn\", \"factor\": 4.0}"},
            {"hidden_act", "\"gelu\""},
            {"model_type", "\"qwen2_moe\""},
            {"architectures", "[\"Qwen2ForSequenceClassification\"]"},
            {"attention_bias", "false"},
            {"mlp_bias", "true"},
            {"layer_types", "[\"full_attention\", \"sliding_attention\"]"},
            {"head_dim", "\"64\""},
            {"head_dim", "32"},
        };
        for (String[] c : refused) {
            ObjectNode node = (ObjectNode) json.readTree(qwen25Config());
            node.set(c[0], json.readTree(c[1]));
            assertThatThrownBy(() -> Qwen2Config.fromJson(node)).as("%s = %s", c[0], c[1])
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("key '" + c[0] + "'");
        }
        ObjectNode accepted = (ObjectNode) json.readTree(qwen25Config());
        accepted.put("attention_bias", true);
        accepted.put("mlp_bias", false);
        accepted.put("head_dim", 64);
        accepted.putNull("rope_scaling");
        accepted.put("attention_dropout", 0);
        ArrayNode layerTypes = accepted.putArray("layer_types");
        for (int l = 0; l < 24; l++) {
            layerTypes.add("full_attention");
        }
        accepted.put("pad_token_id", 151643);
        assertThat(Qwen2Config.fromJson(accepted).headDim()).isEqualTo(64);
        layerTypes.remove(0);
        assertThatThrownBy(() -> Qwen2Config.fromJson(accepted)).hasMessageContaining("key 'layer_types' names 23");
    }

    @Test
    void writeThenReadRoundTrips() throws IOException {
        Qwen2Config c = new Qwen2Config(256, 128, 256, 6, 4, 2, 64, 10000.0, 1e-6, true);
        c.write(dir.resolve("config.json"));
        assertThat(Qwen2Config.read(dir.resolve("config.json"))).isEqualTo(c);
        assertThat(Files.readString(dir.resolve("config.json"))).contains("\"model_type\" : \"qwen2\"",
                "\"num_key_value_heads\" : 2", "\"tie_word_embeddings\" : true");
    }

    @Test
    void invalidConfigsAreRejectedWithTheField() throws IOException {
        ObjectMapper json = new ObjectMapper();
        String[][] cases = {
            {"num_key_value_heads", "3", "not a multiple of num_key_value_heads"},
            {"hidden_size", "900", "not a multiple of num_attention_heads"},
            {"hidden_act", "\"gelu\"", "hidden_act"},
            {"rope_scaling", "{\"type\": \"yarn\"}", "rope_scaling"},
            {"use_sliding_window", "true", "use_sliding_window"},
            {"rms_norm_eps", "0", "rms_norm_eps"},
            {"vocab_size", "\"many\"", "vocab_size"},
            {"head_dim", "32", "head_dim"},
        };
        for (String[] c : cases) {
            ObjectNode node = (ObjectNode) json.readTree(qwen25Config());
            node.set(c[0], json.readTree(c[1]));
            assertThatThrownBy(() -> Qwen2Config.fromJson(node)).as(c[0]).hasMessageContaining(c[2]);
        }
        ObjectNode missing = (ObjectNode) json.readTree(qwen25Config());
        missing.remove("num_hidden_layers");
        assertThatThrownBy(() -> Qwen2Config.fromJson(missing)).hasMessageContaining("num_hidden_layers is missing");
        Files.writeString(dir.resolve("bad.json"), "{not json");
        assertThatThrownBy(() -> Qwen2Config.read(dir.resolve("bad.json"))).hasMessageContaining("bad.json");
    }
}
