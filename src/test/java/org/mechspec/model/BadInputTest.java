package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Bad input to the model gets an exception naming the cause, never a NaN loss. */
@Tag("model")
class BadInputTest {

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
}
