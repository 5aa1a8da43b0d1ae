package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Each model contract's predicate reports false on a deliberately broken model. */
@Tag("model")
class ModelMutantsTest {

    @Test
    void ropeBackwardInTheForwardDirectionFailsTheGradientCheck() {
        Map<String, Double> errors = GradientCheckTest.baseErrors(false, Mutant.ROPE_BACKWARD_SAME_DIRECTION);
        System.out.println("rope mutant " + errors);
        assertThat(ModelChecks.gradientsAgree(errors, GradientCheckTest.TOLERANCE)).isFalse();
    }

    @Test
    void missingQueryBiasGradientFailsTheGradientCheck() {
        Map<String, Double> errors = GradientCheckTest.baseErrors(true, Mutant.Q_BIAS_GRAD_MISSING);
        assertThat(errors.get("model.layers.0.self_attn.q_proj.bias")).isGreaterThan(0.5);
        assertThat(ModelChecks.gradientsAgree(errors, GradientCheckTest.TOLERANCE)).isFalse();
    }

    @Test
    void loraGradientIgnoringDropoutFailsTheLoraGradientCheck() {
        Map<String, Double> errors = GradientCheckTest.loraErrors(Mutant.LORA_A_GRAD_IGNORES_DROPOUT);
        System.out.println("lora mutant " + errors);
        assertThat(ModelChecks.gradientsAgree(errors, GradientCheckTest.TOLERANCE)).isFalse();
    }

    @Test
    void printGood() {
        System.out.println("good " + GradientCheckTest.baseErrors(false, Mutant.NONE));
        System.out.println("good lora " + GradientCheckTest.loraErrors(Mutant.NONE));
    }
}
