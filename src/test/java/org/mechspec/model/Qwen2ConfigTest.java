package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("model")
class Qwen2ConfigTest {
    /** The fields of a Qwen2.5-0.5B config.json, as Hugging Face publishes that model. */
    static final String QWEN25_05B = """
            {"architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
             "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
             "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24,
             "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
             "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 32768, "tie_word_embeddings": true,
             "torch_dtype": "bfloat16", "transformers_version": "4.40.1", "use_cache": true,
             "use_sliding_window": false, "vocab_size": 151936}
            """;

    @TempDir
    Path dir;

    @Test
    void readsARealQwen2Config() throws IOException {
        Qwen2Config c = Qwen2Config.fromJson(new ObjectMapper().readTree(QWEN25_05B));
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
            ObjectNode node = (ObjectNode) json.readTree(QWEN25_05B);
            node.set(c[0], json.readTree(c[1]));
            assertThatThrownBy(() -> Qwen2Config.fromJson(node)).as(c[0]).hasMessageContaining(c[2]);
        }
        ObjectNode missing = (ObjectNode) json.readTree(QWEN25_05B);
        missing.remove("num_hidden_layers");
        assertThatThrownBy(() -> Qwen2Config.fromJson(missing)).hasMessageContaining("num_hidden_layers is missing");
        Files.writeString(dir.resolve("bad.json"), "{not json");
        assertThatThrownBy(() -> Qwen2Config.read(dir.resolve("bad.json"))).hasMessageContaining("bad.json");
    }
}
