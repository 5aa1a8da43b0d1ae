package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bad input to the model gets an exception naming the cause, never a NaN loss. */
@Tag("model")
class BadInputTest {
    @TempDir
    Path dir;

    @Test
    void nonFiniteActivationsNameTheLayer() {
        Qwen2Config config = TinyModels.config(false);
        Qwen2Model model = TinyModels.randomModel(config, Precision.FP32, 71);
        model.parameter("model.layers.1.mlp.down_proj.weight").value().set(0, Double.NaN);
        assertThatThrownBy(() -> model.forward(TinyModels.randomBatch(config, 1, 4, 72)))
                .isInstanceOf(ForwardPass.NonFiniteActivationException.class).hasMessageContaining("layer 1 output");
    }

    @Test
    void tokensOutsideTheVocabularyAreRejected() {
        Qwen2Config config = TinyModels.config(false);
        Qwen2Model model = TinyModels.randomModel(config, Precision.FP32, 73);
        assertThatThrownBy(() -> model.forward(new Batch(new int[] {1, 11}, null, 1, 2)))
                .hasMessageContaining("input token 11 at position 1");
        assertThatThrownBy(() -> model.forward(new Batch(new int[] {1, 2}, new int[] {3, 12}, 1, 2)).loss())
                .hasMessageContaining("target 12");
    }

    @Test
    void shapesAndSettingsAreChecked() {
        Qwen2Config config = TinyModels.config(false);
        Qwen2Model model = TinyModels.randomModel(config, Precision.FP32, 74);
        assertThatThrownBy(() -> new Batch(new int[3], null, 2, 2)).hasMessageContaining("needs 4 inputs");
        assertThatThrownBy(() -> model.forward(new Batch(new int[17], null, 1, 17)))
                .hasMessageContaining("exceeds max_position_embeddings 16");
        assertThatThrownBy(() -> model.setAttention(2, new SoftmaxAttention())).hasMessageContaining("layer 2 does not exist");
        assertThatThrownBy(() -> new LoraConfig(0, 16, 0.05)).hasMessageContaining("rank");
        assertThatThrownBy(() -> new LoraConfig(8, 16, 1.0)).hasMessageContaining("dropout");
        assertThatThrownBy(() -> new Qwen2Config(256, 90, 256, 6, 4, 2, 64, 1e4, 1e-6, true))
                .hasMessageContaining("not a multiple of num_attention_heads");
        assertThatThrownBy(() -> Matmul.accumulate(Tensor.zeros(Precision.FP32, 4), Tensor.zeros(Precision.FP64, 4),
                Tensor.zeros(Precision.FP32, 4), 2, 2, 2)).hasMessageContaining("mixed precisions");
    }

    // ---- Hugging Face Qwen2.5-style checkpoint folders --------------------------------------------------------

    @Test
    void aWrongShapeInTheSafetensorsHeaderNamesTheTensorAndBothShapes() throws IOException {
        RandomQwenCheckpoint.Dims dims = RandomQwenCheckpoint.TINY;
        RandomQwenCheckpoint.writeConfig(dir, RandomQwenCheckpoint.config(dims));
        List<SafeTensorsWriter.Named> tensors = RandomQwenCheckpoint.tensors(dims, 75).stream()
                .map(n -> n.name().equals("model.layers.1.self_attn.q_proj.weight")
                        ? new SafeTensorsWriter.Named(n.name(), Tensor.zeros(Precision.FP32, 16, 15)) : n)
                .toList();
        RandomQwenCheckpoint.writeWeights(dir, tensors);
        assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32)).isInstanceOf(SafeTensorsException.class)
                .hasMessageContaining("tensor model.layers.1.self_attn.q_proj.weight has shape [16, 15] but the config"
                        + " needs [16, 16]");
    }

    @Test
    void aTruncatedWeightsFileNamesTheFile() throws IOException {
        RandomQwenCheckpoint.write(dir, RandomQwenCheckpoint.TINY, 76);
        Path weights = dir.resolve(Checkpoint.WEIGHTS_FILE);
        byte[] bytes = Files.readAllBytes(weights);
        for (int keep : new int[] {bytes.length - 1, bytes.length / 2, 100, 3}) {
            Files.write(weights, Arrays.copyOf(bytes, keep));
            assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32)).as("first %d bytes", keep)
                    .isInstanceOf(SafeTensorsException.class).hasMessageStartingWith(weights.toString())
                    .hasMessageContaining("truncated");
        }
    }

    @Test
    void aSlidingWindowConfigIsRefusedNamingTheKey() throws IOException {
        RandomQwenCheckpoint.write(dir, RandomQwenCheckpoint.TINY, 77);
        ObjectNode config = RandomQwenCheckpoint.config(RandomQwenCheckpoint.TINY);
        config.put("use_sliding_window", true);
        RandomQwenCheckpoint.writeConfig(dir, config);
        assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32)).isInstanceOf(SafeTensorsException.class)
                .hasMessageStartingWith(dir.resolve(Checkpoint.CONFIG_FILE) + ": key 'use_sliding_window' is true");
    }

    @Test
    void anUnknownArchitectureKeyIsRefusedNamingTheKey() throws IOException {
        RandomQwenCheckpoint.write(dir, RandomQwenCheckpoint.TINY, 78);
        ObjectNode config = RandomQwenCheckpoint.config(RandomQwenCheckpoint.TINY);
        config.put("num_experts_per_tok", 4);
        RandomQwenCheckpoint.writeConfig(dir, config);
        assertThatThrownBy(() -> Checkpoint.load(dir, Precision.FP32)).isInstanceOf(SafeTensorsException.class)
                .hasMessage(dir.resolve(Checkpoint.CONFIG_FILE) + ": key 'num_experts_per_tok' is not known to this"
                        + " Qwen2 implementation and may change the architecture");
    }
}
