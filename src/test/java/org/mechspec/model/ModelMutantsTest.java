package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.spec.MissingDataSkips;

/**
 * Every model contract's predicate can fail: the unbroken mechanism passes it, the mechanism with one part broken
 * ({@link BrokenParts}) makes it report false.
 */
@ExtendWith(MissingDataSkips.class)
@Tag("model")
class ModelMutantsTest {

    @Test
    void ropeBackwardInTheForwardDirectionFailsTheGradientCheck() {
        GradientCheckTest.Case unbroken = GradientCheckTest.baseCase(false);
        assertThat(ModelChecks.gradientsAgree(unbroken.errors(), GradientCheckTest.TOLERANCE)).isTrue();
        Qwen2Model model = unbroken.model();
        Qwen2Model brokenModel = BrokenParts.withRope(model, BrokenParts.sameDirectionBackwardRope(model.config()));
        GradientCheckTest.Case broken = new GradientCheckTest.Case(brokenModel, unbroken.batch(), null);
        assertThat(ModelChecks.gradientsAgree(broken.errors(), GradientCheckTest.TOLERANCE)).isFalse();
    }

    @Test
    void missingQueryBiasGradientFailsTheGradientCheck() {
        GradientCheckTest.Case c = GradientCheckTest.baseCase(true);
        c.model().zeroGrad();
        c.forward().backward();
        Map<String, Tensor> gradients = GradientCheck.gradients(c.model());
        assertThat(ModelChecks.gradientsAgree(c.errors(gradients), GradientCheckTest.TOLERANCE)).isTrue();
        Map<String, Double> errors = c.errors(BrokenParts.withoutQueryBiasGradient(gradients));
        assertThat(errors.get("model.layers.0.self_attn.q_proj.bias")).isGreaterThan(0.5);
        assertThat(ModelChecks.gradientsAgree(errors, GradientCheckTest.TOLERANCE)).isFalse();
    }

    @Test
    void loraGradientIgnoringDropoutFailsTheLoraGradientCheck() {
        GradientCheckTest.Case c = GradientCheckTest.loraCase();
        ForwardPass pass = c.forward();
        assertThat(ModelChecks.gradientsAgree(c.errors(pass), GradientCheckTest.TOLERANCE)).isTrue();
        Map<String, Double> errors = c.errors(BrokenParts.forgettingLoraDropout(c.model(), pass));
        assertThat(ModelChecks.gradientsAgree(errors, GradientCheckTest.TOLERANCE)).isFalse();
    }

    @Test
    void randomlyInitializedLoraBChangesTheLogits() {
        Tensor[] unbroken = LoraTest.freshAdapterLogits(Lora::attach, false);
        assertThat(ModelChecks.bitIdentical(unbroken[0], unbroken[1])).isTrue();
        Tensor[] broken = LoraTest.freshAdapterLogits(BrokenParts::attachWithRandomB, false);
        assertThat(ModelChecks.bitIdentical(broken[0], broken[1])).isFalse();
    }

    @Test
    void mergingWithoutTheScaleBreaksMergedEqualsUnmerged() {
        Tensor[] unbroken = LoraTest.mergedAndUnmergedLogits(Lora::merge);
        assertThat(ModelChecks.forwardsAgree(unbroken[1], unbroken[0], LoraTest.MERGE_TOLERANCE)).isTrue();
        Tensor[] broken = LoraTest.mergedAndUnmergedLogits(BrokenParts::mergeWithoutScale);
        assertThat(ModelChecks.forwardsAgree(broken[1], broken[0], LoraTest.MERGE_TOLERANCE)).isFalse();
    }

    @Test
    void gradientAscentMakesTheLossRise() {
        double[] unbroken = TrainingTest.overfitOneBatch(TrainingTest::adamW, false);
        assertThat(ModelChecks.lossFell(unbroken[0], unbroken[1], TrainingTest.FRACTION)).isTrue();
        double[] loss = TrainingTest.overfitOneBatch(BrokenParts::ascendingAdamW, false);
        assertThat(loss[1]).isGreaterThan(loss[0]);
        assertThat(ModelChecks.lossFell(loss[0], loss[1], TrainingTest.FRACTION)).isFalse();
    }

    @Test
    void writerRoundingToBf16BreaksTheRoundTrip(@TempDir Path dir) throws IOException {
        Qwen2Model model = SafeTensorsTest.fp32Model();
        assertThat(SafeTensorsTest.roundTripsBitIdentically(model, dir.resolve("unbroken"), SafeTensorsTest.F32))
                .isTrue();
        SafeTensorsTest.Writer broken = BrokenParts::writeRoundedToBf16;
        assertThat(SafeTensorsTest.roundTripsBitIdentically(model, dir.resolve("broken"), broken)).isFalse();
    }

    @Test
    void flippedRopeSignNoLongerMatchesTheFixtureRecord() throws IOException {
        byte[] weights = Files.readAllBytes(FixtureTest.DIR.resolve(Checkpoint.WEIGHTS_FILE));
        Qwen2Model fixture = FixtureTest.fixture();
        assertThat(FixtureTest.matchesRecord(weights, fixture)).isTrue();
        Qwen2Model broken = BrokenParts.withRope(fixture, BrokenParts.signFlippedRope(fixture.config()));
        assertThat(FixtureTest.matchesRecord(weights, broken)).isFalse();
    }

    @Test
    void oneFlippedWeightBitNoLongerMatchesTheFixtureRecord() throws IOException {
        byte[] weights = Files.readAllBytes(FixtureTest.DIR.resolve(Checkpoint.WEIGHTS_FILE));
        Qwen2Model fixture = FixtureTest.fixture();
        assertThat(FixtureTest.matchesRecord(weights, fixture)).isTrue();
        weights[weights.length - 1] ^= 1;
        assertThat(FixtureTest.matchesRecord(weights, fixture)).isFalse();
    }

    @Test
    void flippedRopeSignDepartsFromTheReferenceForward() {
        Qwen2Model model = ReferenceForwardTest.randomModel(false);
        Tensor[] unbroken = ReferenceForwardTest.modelAndReference(model);
        assertThat(ModelChecks.forwardsAgree(unbroken[0], unbroken[1], ReferenceForwardTest.TOLERANCE)).isTrue();
        Tensor[] broken = ReferenceForwardTest.modelAndReference(
                BrokenParts.withRope(model, BrokenParts.signFlippedRope(model.config())));
        assertThat(ModelChecks.forwardsAgree(broken[0], broken[1], ReferenceForwardTest.TOLERANCE)).isFalse();
    }
}
