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
        assertThat(ModelChecks.gradientsAgree(errors, GradientCheckTest.TOLERANCE)).isFalse();
    }

    @Test
    void randomlyInitializedLoraBChangesTheLogits() {
        Tensor[] logits = LoraTest.freshAdapterLogits(Mutant.LORA_B_RANDOM_INIT, false);
        assertThat(ModelChecks.bitIdentical(logits[0], logits[1])).isFalse();
    }

    @Test
    void mergingWithoutTheScaleBreaksMergedEqualsUnmerged() {
        Tensor[] logits = LoraTest.mergedAndUnmergedLogits(Mutant.MERGE_WITHOUT_SCALE);
        assertThat(ModelChecks.forwardsAgree(logits[1], logits[0], LoraTest.MERGE_TOLERANCE)).isFalse();
    }

    @Test
    void gradientAscentMakesTheLossRise() {
        double[] loss = TrainingTest.overfitOneBatch(Mutant.ADAMW_ASCENT, false);
        assertThat(loss[1]).isGreaterThan(loss[0]);
        assertThat(ModelChecks.lossFell(loss[0], loss[1], TrainingTest.FRACTION)).isFalse();
    }

    @Test
    void writerRoundingToBf16BreaksTheRoundTrip(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws java.io.IOException {
        assertThat(SafeTensorsTest.roundTripsBitIdentically(SafeTensorsTest.fp32Model(), dir, Mutant.WRITER_ROUNDS_TO_BF16))
                .isFalse();
    }

    @Test
    void flippedRopeSignNoLongerMatchesTheFixtureRecord() throws java.io.IOException {
        byte[] weights = java.nio.file.Files.readAllBytes(FixtureTest.DIR.resolve(Checkpoint.WEIGHTS_FILE));
        assertThat(FixtureTest.matchesRecord(weights, Mutant.ROPE_SIGN_FLIPPED)).isFalse();
    }

    @Test
    void oneFlippedWeightBitNoLongerMatchesTheFixtureRecord() throws java.io.IOException {
        byte[] weights = java.nio.file.Files.readAllBytes(FixtureTest.DIR.resolve(Checkpoint.WEIGHTS_FILE));
        weights[weights.length - 1] ^= 1;
        assertThat(FixtureTest.matchesRecord(weights, Mutant.NONE)).isFalse();
    }

    @Test
    void flippedRopeSignDepartsFromTheReferenceForward() {
        Tensor[] logits = ReferenceForwardTest.modelAndReference(false, Mutant.ROPE_SIGN_FLIPPED);
        assertThat(ModelChecks.forwardsAgree(logits[0], logits[1], ReferenceForwardTest.TOLERANCE)).isFalse();
    }
}
