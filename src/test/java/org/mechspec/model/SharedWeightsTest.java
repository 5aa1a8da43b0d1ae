package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.compute.Rng;

/**
 * A copy of a model shares its frozen base tensors (no weight memory), and sharing changes memory, never values:
 * unfreezing and training a copy, merging it or loading a checkpoint into it leaves the original bit for bit. Each
 * test first asserts that the tensor really is shared, so an in-place write (the old merge, an unfreeze without
 * a copy) would show up in the original and fail the bit-identity check that follows.
 */
@Tag("model")
class SharedWeightsTest {
    static final String Q = "model.layers.1.self_attn.q_proj.weight";
    static final String EMBED = "model.embed_tokens.weight";

    @TempDir
    Path dir;

    /** Every base tensor's values, copied (the original's state to compare against). */
    static Map<String, Tensor> snapshot(Qwen2Model model) {
        Map<String, Tensor> out = new LinkedHashMap<>();
        for (Parameter p : model.parameters()) {
            out.put(p.name(), p.value().copy());
        }
        return out;
    }

    static List<String> differingFrom(Map<String, Tensor> snapshot, Qwen2Model model) {
        return snapshot.entrySet().stream().filter(e -> !model.parameter(e.getKey()).value().bitEquals(e.getValue()))
                .map(Map.Entry::getKey).toList();
    }

    static Qwen2Model frozenModel(boolean tied, Precision precision, long seed) {
        Qwen2Model m = TinyModels.randomModel(TinyModels.config(tied), precision, seed);
        m.setBaseTrainable(false);
        return m;
    }

    static void train(Qwen2Model model, Batch batch, int steps) {
        AdamW opt = AdamW.withoutWeightDecay(model.trainableParameters());
        for (int s = 0; s < steps; s++) {
            model.zeroGrad();
            model.forward(batch).backward();
            opt.step(1e-2);
        }
    }

    @Test
    void aCopyOfAFrozenModelSharesEveryBaseTensorAndCopiesTheAdapters() {
        Qwen2Model original = frozenModel(true, Precision.FP32, 81);
        Lora.attach(original, LoraTest.CONFIG, new Rng(82));
        Qwen2Model copy = original.copy();
        for (Parameter p : original.parameters()) {
            Parameter theirs = copy.parameter(p.name());
            assertThat(theirs).as(p.name()).isNotSameAs(p);
            assertThat(theirs.value()).as(p.name()).isSameAs(p.value());
            assertThat(theirs.trainable()).as(p.name()).isFalse();
        }
        for (Parameter p : original.loraParameters()) {
            assertThat(copy.parameter(p.name()).value()).as(p.name()).isNotSameAs(p.value());
            assertThat(copy.parameter(p.name()).value().bitEquals(p.value())).as(p.name()).isTrue();
        }
        // Sharing is real: a write into the copy's frozen tensor would reach the original.
        Tensor q = copy.parameter(Q).value();
        double before = q.get(0);
        q.set(0, before + 1.0);
        assertThat(original.parameter(Q).value().get(0)).isEqualTo(q.get(0)).isNotEqualTo(before);
        q.set(0, before);
    }

    @Test
    void aCopyOfATrainableModelOwnsItsTensorsAndGradients() {
        Qwen2Config config = TinyModels.config(false);
        Qwen2Model original = TinyModels.randomModel(config, Precision.FP64, 83);
        original.forward(TinyModels.randomBatch(config, 1, 5, 84)).backward();
        Qwen2Model copy = original.copy();
        for (Parameter p : original.parameters()) {
            Parameter theirs = copy.parameter(p.name());
            assertThat(theirs.value()).as(p.name()).isNotSameAs(p.value());
            assertThat(theirs.value().bitEquals(p.value())).as(p.name()).isTrue();
            assertThat(theirs.grad()).as(p.name()).isNotSameAs(p.grad());
            assertThat(theirs.grad().bitEquals(p.grad())).as(p.name()).isTrue();
        }
    }

    @Test
    void trainingAnUnfrozenCopyLeavesTheOriginalBitIdenticalAndTrainsAsAnUnsharedModel() {
        for (boolean tied : new boolean[] {false, true}) {
            Qwen2Config config = TinyModels.config(tied);
            Batch batch = TinyModels.randomBatch(config, 2, 6, 86);
            Qwen2Model original = frozenModel(tied, Precision.FP32, 85);
            Map<String, Tensor> originalValues = snapshot(original);
            Qwen2Model copy = original.copy();
            assertThat(copy.parameter(Q).value()).isSameAs(original.parameter(Q).value());
            Tensor originalQ = original.parameter(Q).value();

            copy.setBaseTrainable(true);
            assertThat(copy.parameter(Q).value()).isNotSameAs(originalQ);
            train(copy, batch, 3);

            assertThat(original.parameter(Q).value()).isSameAs(originalQ);
            assertThat(differingFrom(originalValues, original)).as("tied " + tied).isEmpty();
            assertThat(differingFrom(originalValues, copy)).as("tied " + tied).contains(Q, EMBED);
            // The same training on a model that never shared anything: the same bits, the tied head included.
            Qwen2Model unshared = TinyModels.randomModel(config, Precision.FP32, 85);
            train(unshared, batch, 3);
            assertThat(TinyModels.differingParameters(unshared, copy)).as("tied " + tied).isEmpty();
            assertThat(ModelChecks.bitIdentical(unshared.forward(batch).logits(), copy.forward(batch).logits()))
                    .as("tied " + tied).isTrue();
        }
    }

    @Test
    void unfreezingTheOriginalLeavesItsCopyBitIdentical() {
        Qwen2Config config = TinyModels.config(false);
        Qwen2Model original = frozenModel(false, Precision.FP64, 87);
        Qwen2Model copy = original.copy();
        Map<String, Tensor> values = snapshot(copy);
        Tensor shared = copy.parameter(Q).value();
        original.setBaseTrainable(true);
        train(original, TinyModels.randomBatch(config, 1, 6, 88), 2);
        assertThat(copy.parameter(Q).value()).isSameAs(shared);
        assertThat(differingFrom(values, copy)).isEmpty();
        assertThat(differingFrom(values, original)).contains(Q);
    }

    @Test
    void mergingACopyLeavesTheOriginalBitIdenticalAndUnmergeRestoresTheSharedTensor() {
        Qwen2Config config = TinyModels.config(true);
        Batch batch = TinyModels.randomBatch(config, 2, 6, 91);
        Qwen2Model original = TinyModels.randomModel(config, Precision.FP64, 89);
        Rng rng = new Rng(90);
        Lora.attach(original, LoraTest.CONFIG, rng);
        LoraTest.randomizeB(original, rng);
        Map<String, Tensor> originalValues = snapshot(original);
        Tensor originalLogits = original.forward(batch).logits();
        Qwen2Model copy = original.copy();
        Tensor shared = original.parameter(Q).value();
        assertThat(copy.parameter(Q).value()).isSameAs(shared);

        Lora.merge(copy);
        assertThat(copy.parameter(Q).value()).isNotSameAs(shared);
        assertThat(original.parameter(Q).value()).isSameAs(shared);
        assertThat(differingFrom(originalValues, original)).isEmpty();
        assertThat(ModelChecks.bitIdentical(originalLogits, original.forward(batch).logits())).isTrue();
        // The merged weight is W + delta element by element, as the in-place merge computed it.
        double[] delta = copy.loraAdapters().get(4).delta();
        Tensor expected = Tensor.zeros(Precision.FP64, shared.shape());
        for (int i = 0; i < delta.length; i++) {
            expected.set(i, shared.get(i) + delta[i]);
        }
        assertThat(copy.loraAdapters().get(4).target() + ".weight").isEqualTo(Q);
        assertThat(copy.parameter(Q).value().bitEquals(expected)).isTrue();
        Tensor merged = copy.forward(batch).logits();
        assertThat(ModelChecks.forwardsAgree(merged, originalLogits, LoraTest.MERGE_TOLERANCE)).isTrue();

        Lora.unmerge(copy);
        assertThat(copy.parameter(Q).value()).isSameAs(shared);
        assertThat(differingFrom(originalValues, copy)).isEmpty();
        assertThat(ModelChecks.bitIdentical(originalLogits, copy.forward(batch).logits())).isTrue();
    }

    @Test
    void mergingTheOriginalLeavesItsCopyBitIdentical() {
        Qwen2Model original = frozenModel(false, Precision.FP32, 92);
        Rng rng = new Rng(93);
        Lora.attach(original, LoraTest.CONFIG, rng);
        LoraTest.randomizeB(original, rng);
        Qwen2Model copy = original.copy();
        Map<String, Tensor> values = snapshot(copy);
        Lora.merge(original);
        assertThat(differingFrom(values, copy)).isEmpty();
        assertThat(differingFrom(values, original)).contains(Q);
        // A copy of the merged model shares the merged tensor and unmerges on its own.
        Qwen2Model mergedCopy = original.copy();
        assertThat(mergedCopy.parameter(Q).value()).isSameAs(original.parameter(Q).value());
        Lora.unmerge(mergedCopy);
        assertThat(differingFrom(values, mergedCopy)).isEmpty();
        assertThat(differingFrom(values, original)).contains(Q);
    }

    @Test
    void aParameterUnfrozenWhileMergedStillCannotWriteTheSharedTensorAfterUnmerge() {
        Qwen2Config config = TinyModels.config(false);
        Qwen2Model original = frozenModel(false, Precision.FP32, 94);
        Lora.attach(original, LoraTest.CONFIG, new Rng(95));
        Map<String, Tensor> values = snapshot(original);
        Qwen2Model copy = original.copy();
        Lora.merge(copy);
        copy.setBaseTrainable(true);
        Lora.unmerge(copy);
        assertThat(copy.parameter(Q).value()).isNotSameAs(original.parameter(Q).value());
        assertThat(differingFrom(values, copy)).isEmpty();
        copy.loraAdapters().forEach(a -> {
            a.a().setTrainable(false);
            a.b().setTrainable(false);
        });
        train(copy, TinyModels.randomBatch(config, 1, 6, 96), 2);
        assertThat(differingFrom(values, original)).isEmpty();
        assertThat(differingFrom(values, copy)).contains(Q);
    }

    @Test
    void loadingACheckpointIntoACopyLeavesTheOriginalBitIdentical() throws IOException {
        Qwen2Model other = TinyModels.randomModel(TinyModels.config(false), Precision.FP32, 97);
        Checkpoint.save(other, dir, DType.F32);
        Qwen2Model original = frozenModel(false, Precision.FP32, 98);
        Map<String, Tensor> values = snapshot(original);
        Qwen2Model copy = original.copy();
        Checkpoint.loadInto(copy, dir);
        assertThat(differingFrom(values, original)).isEmpty();
        assertThat(TinyModels.differingParameters(other, copy)).isEmpty();
    }
}
