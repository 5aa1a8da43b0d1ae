package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;

/** Finite differences (fp64) against the explicit backward for every parameter tensor and the LoRA tensors. */
@Tag("model")
class GradientCheckTest {
    static final double TOLERANCE = 1e-6;
    static final double STEP = 1e-5;

    /** A model to check, the batch and the dropout masks (null for none) its loss is taken on. */
    record Case(Qwen2Model model, Batch batch, DropoutMasks masks) {
        Map<String, Double> errors() {
            return GradientCheck.relativeErrors(model, batch, masks, STEP);
        }

        /** The errors of the gradients backward computes from {@code pass}, a forward record of this case. */
        Map<String, Double> errors(ForwardPass pass) {
            model.zeroGrad();
            pass.backward();
            return errors(GradientCheck.gradients(model));
        }

        Map<String, Double> errors(Map<String, Tensor> analyticGradients) {
            return GradientCheck.relativeErrors(model, batch, masks, STEP, analyticGradients);
        }

        ForwardPass forward() {
            return model.forward(batch, masks);
        }
    }

    /** Every base tensor trainable, no LoRA. */
    static Case baseCase(boolean tied) {
        Qwen2Config config = TinyModels.config(tied);
        return new Case(TinyModels.randomModel(config, Precision.FP64, 7), TinyModels.randomBatch(config, 2, 5, 8),
                null);
    }

    /** Only LoRA trains, under dropout. */
    static Case loraCase() {
        Qwen2Config config = TinyModels.config(false);
        Qwen2Model model = TinyModels.randomModel(config, Precision.FP64, 9);
        Rng rng = new Rng(10);
        Lora.attach(model, new LoraConfig(2, 4.0, 0.3), rng);
        for (LoraAdapter a : model.loraAdapters()) { // B = 0 would make ∂/∂A vanish: make it non-zero
            for (int i = 0; i < a.b().value().size(); i++) {
                a.b().value().set(i, 0.3 * rng.normal());
            }
        }
        Batch batch = TinyModels.randomBatch(config, 2, 5, 11);
        DropoutMasks masks = DropoutMasks.draw(model, 10, rng);
        return new Case(model, batch, masks);
    }

    @Test
    void everyParameterTensorOfTheUntiedModel() {
        Map<String, Double> errors = baseCase(false).errors();
        assertThat(errors).hasSize(Qwen2Model.zeros(TinyModels.config(false), Precision.FP64).parameters().size());
        assertThat(errors).containsKey("lm_head.weight");
        assertThat(ModelChecks.gradientsAgree(errors, TOLERANCE)).as("%s", errors).isTrue();
    }

    @Test
    void everyParameterTensorOfTheTiedModel() {
        Map<String, Double> errors = baseCase(true).errors();
        assertThat(errors).containsKey("model.embed_tokens.weight").doesNotContainKey("lm_head.weight");
        assertThat(ModelChecks.gradientsAgree(errors, TOLERANCE)).as("%s", errors).isTrue();
    }

    @Test
    void loraTensorsWithDropout() {
        Map<String, Double> errors = loraCase().errors();
        assertThat(errors).hasSize(2 * 4 * 2).allSatisfy((name, e) -> assertThat(name).contains("lora_"));
        assertThat(ModelChecks.gradientsAgree(errors, TOLERANCE)).as("%s", errors).isTrue();
    }
}
