package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.CommonOps_DDRM;
import org.ejml.dense.row.NormOps_DDRM;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;

/** LoRA contracts: a fresh adapter changes nothing, merging changes nothing, the delta norm is what it says. */
@Tag("model")
class LoraTest {
    static final LoraConfig CONFIG = new LoraConfig(2, 4.0, 0.25);
    static final double MERGE_TOLERANCE = 1e-12;

    /** How adapters are attached: {@link Lora#attach}, or a broken attach. */
    interface Attach {
        void attach(Qwen2Model model, LoraConfig config, Rng rng);
    }

    /** How adapters are merged: {@link Lora#merge}, or a broken merge. */
    interface Merge {
        void merge(Qwen2Model model);
    }

    /** Logits of the base model and of the same model with freshly attached adapters (B = 0). */
    static Tensor[] freshAdapterLogits(Attach attach, boolean withDropout) {
        Qwen2Config config = TinyModels.config(false);
        Qwen2Model base = TinyModels.randomModel(config, Precision.FP32, 21);
        Batch batch = TinyModels.randomBatch(config, 2, 7, 22);
        Tensor before = base.forward(batch).logits();
        Qwen2Model adapted = base.copy();
        Rng rng = new Rng(23);
        attach.attach(adapted, CONFIG, rng);
        DropoutMasks masks = withDropout ? DropoutMasks.draw(adapted, 14, rng) : null;
        return new Tensor[] {before, adapted.forward(batch, masks).logits()};
    }

    /** fp64 logits with adapters unmerged and merged (B random, so the update is not zero). */
    static Tensor[] mergedAndUnmergedLogits(Merge merge) {
        Qwen2Config config = TinyModels.config(true);
        Qwen2Model model = TinyModels.randomModel(config, Precision.FP64, 24);
        Rng rng = new Rng(25);
        Lora.attach(model, CONFIG, rng);
        randomizeB(model, rng);
        Batch batch = TinyModels.randomBatch(config, 2, 6, 26);
        Tensor unmerged = model.forward(batch).logits();
        merge.merge(model);
        Tensor merged = model.forward(batch).logits();
        return new Tensor[] {unmerged, merged};
    }

    static void randomizeB(Qwen2Model model, Rng rng) {
        for (LoraAdapter a : model.loraAdapters()) {
            for (int i = 0; i < a.b().value().size(); i++) {
                a.b().value().set(i, 0.5 * rng.normal());
            }
        }
    }

    @Test
    void freshAdaptersLeaveLogitsBitIdentical() {
        Tensor[] logits = freshAdapterLogits(Lora::attach, false);
        assertThat(ModelChecks.bitIdentical(logits[0], logits[1])).isTrue();
    }

    @Test
    void freshAdaptersLeaveLogitsBitIdenticalUnderDropout() {
        Tensor[] logits = freshAdapterLogits(Lora::attach, true);
        assertThat(ModelChecks.bitIdentical(logits[0], logits[1])).isTrue();
    }

    @Test
    void mergedForwardEqualsUnmergedForward() {
        Tensor[] logits = mergedAndUnmergedLogits(Lora::merge);
        assertThat(ModelChecks.maxRelativeDifference(logits[1], logits[0])).isLessThanOrEqualTo(MERGE_TOLERANCE);
        assertThat(ModelChecks.forwardsAgree(logits[1], logits[0], MERGE_TOLERANCE)).isTrue();
    }

    @Test
    void unmergeRestoresTheBaseWeightsBitForBit() {
        Qwen2Model model = TinyModels.randomModel(TinyModels.config(false), Precision.FP32, 27);
        Qwen2Model original = model.copy();
        Rng rng = new Rng(28);
        Lora.attach(model, CONFIG, rng);
        randomizeB(model, rng);
        Lora.merge(model);
        assertThat(model.parameter("model.layers.1.self_attn.o_proj.weight").value()
                .bitEquals(original.parameter("model.layers.1.self_attn.o_proj.weight").value())).isFalse();
        Lora.unmerge(model);
        assertThat(TinyModels.differingParameters(original, model)).isEmpty();
        assertThatThrownBy(() -> Lora.unmerge(model)).hasMessageContaining("not merged");
    }

    @Test
    void attachDrawsAFromTheRngFreezesTheBaseAndZeroesB() {
        Qwen2Config config = TinyModels.config(false);
        Qwen2Model model = TinyModels.randomModel(config, Precision.FP64, 29);
        Lora.attach(model, CONFIG, new Rng(30));
        assertThat(model.trainableParameters()).allMatch(p -> p.name().contains(".lora_"));
        assertThat(model.trainableParameters()).hasSize(config.numHiddenLayers() * 4 * 2);
        assertThat(Lora.trainableCount(model)).isEqualTo(2L * 2 * ((16 + 16) + (16 + 8) + (16 + 8) + (16 + 16)));
        Rng replay = new Rng(30);
        LoraAdapter first = model.loraAdapters().get(0);
        assertThat(first.target()).isEqualTo("model.layers.0.self_attn.q_proj");
        for (int i = 0; i < first.a().value().size(); i++) {
            assertThat(first.a().value().get(i)).isEqualTo(replay.normal() / Math.sqrt(16));
        }
        assertThat(first.b().value().toDoubles()).containsOnly(0.0);
        assertThat(Lora.parameterDeltaL2(model)).isZero();
    }

    @Test
    void parameterDeltaL2IsTheFrobeniusNormOfTheScaledProducts() {
        Qwen2Model model = TinyModels.randomModel(TinyModels.config(false), Precision.FP64, 31);
        Rng rng = new Rng(32);
        Lora.attach(model, CONFIG, rng);
        randomizeB(model, rng);
        double sumSq = 0.0;
        for (LoraAdapter a : model.loraAdapters()) {
            DMatrixRMaj b = new DMatrixRMaj(a.b().value().dim(0), a.b().value().dim(1), true, a.b().value().toDoubles());
            DMatrixRMaj am = new DMatrixRMaj(a.a().value().dim(0), a.a().value().dim(1), true, a.a().value().toDoubles());
            DMatrixRMaj ba = new DMatrixRMaj(b.numRows, am.numCols);
            CommonOps_DDRM.mult(CONFIG.scale(), b, am, ba);
            double f = NormOps_DDRM.normF(ba);
            sumSq += f * f;
        }
        assertThat(Lora.parameterDeltaL2(model)).isCloseTo(Math.sqrt(sumSq), org.assertj.core.data.Offset.offset(1e-12));
        assertThat(Lora.parameterDeltaL2(model)).isGreaterThan(0.1);
    }

    @Test
    void dropoutMasksAreSeededAndShared() {
        Qwen2Model a = TinyModels.randomModel(TinyModels.config(false), Precision.FP32, 33);
        Lora.attach(a, CONFIG, new Rng(34));
        Qwen2Model b = a.copy();
        DropoutMasks m1 = DropoutMasks.draw(a, 10, new Rng(35));
        DropoutMasks m2 = DropoutMasks.draw(b, 10, new Rng(35));
        for (LoraAdapter adapter : a.loraAdapters()) {
            assertThat(m1.keep(adapter.target(), 10)).containsExactly(m2.keep(adapter.target(), 10));
        }
        boolean[] q0 = m1.keep("model.layers.0.self_attn.q_proj", 10);
        int dropped = 0;
        for (boolean k : q0) {
            dropped += k ? 0 : 1;
        }
        assertThat(dropped).isBetween(10, 80); // p = 0.25 of 160 inputs
        assertThatThrownBy(() -> m1.keep("model.layers.0.self_attn.q_proj", 12)).hasMessageContaining("12");
    }

    @Test
    void mergedAdaptersRefuseTraining() {
        Qwen2Model model = TinyModels.randomModel(TinyModels.config(false), Precision.FP32, 36);
        Rng rng = new Rng(37);
        Lora.attach(model, CONFIG, rng);
        Lora.merge(model);
        DropoutMasks masks = DropoutMasks.draw(model, 6, rng);
        Batch batch = TinyModels.randomBatch(TinyModels.config(false), 1, 6, 38);
        assertThatThrownBy(() -> model.forward(batch, masks)).hasMessageContaining("merged");
    }
}
