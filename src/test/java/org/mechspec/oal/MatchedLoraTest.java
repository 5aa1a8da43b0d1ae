package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;
import org.mechspec.data.TokenBlocks;
import org.mechspec.model.AdamW;
import org.mechspec.model.Batch;
import org.mechspec.model.DropoutMasks;
import org.mechspec.model.Lora;
import org.mechspec.model.Parameter;
import org.mechspec.model.Qwen2Model;
import org.mechspec.spec.Breaks;

/** What the matched LoRA adaptation records and trains, against a plain AdamW loop written out here. */
@Tag("oal")
class MatchedLoraTest {

    private static ConvertedAttention block(Rng rng) {
        return TinyOal.convertedBlock(rng);
    }

    private static Batch batch() {
        return TinyOal.twoBlockBatch();
    }

    @Test
    void recordSeesNonZeroBAndTheBlocksTrainability() {
        Qwen2Model m = TinyOal.model(2, 5);
        Lora.attach(m, OalProtocol.LORA, new Rng(2));
        assertThat(new LoraRecord(m, null).initialBZero).isTrue();
        assertThat(new LoraRecord(m, null).blockTrainable).isFalse();
        ConvertedAttention b = block(new Rng(2));
        assertThat(new LoraRecord(m, b).blockTrainable).isFalse();
        b.factor().setTrainable(true);
        assertThat(new LoraRecord(m, b).blockTrainable).isTrue();
        m.loraAdapters().get(1).b().value().set(0, 0.25);
        assertThat(new LoraRecord(m, null).initialBZero).isFalse();
    }

    /**
     * Two steps: the softmax model's adapters equal those of the loop attach → (draw masks, zero grads, forward,
     * backward, AdamW step) per step from the same stream, bit for bit; the converted model runs the block, shares
     * each step's masks and records the frozen block's hash after training.
     */
    @Test
    void adaptationIsThePlainLoopWithSharedMasks() {
        Qwen2Model base = TinyOal.model(4, 5);
        ConvertedAttention block = block(new Rng(4));
        Batch batch = batch();
        MatchedLora.Adapted a = MatchedLora.adapt(base, OalProtocol.LAYER, block, batch, new Rng(9), OalProtocol.LORA, 2,
                1e-2);

        Rng rng = new Rng(9);
        Qwen2Model ref = base.copy();
        Lora.attach(ref, OalProtocol.LORA, rng);
        AdamW opt = AdamW.withoutWeightDecay(ref.trainableParameters());
        int rows = batch.batch() * batch.seqLen();
        for (int step = 0; step < 2; step++) {
            DropoutMasks masks = DropoutMasks.draw(ref, rows, rng);
            ref.zeroGrad();
            ref.forward(batch, masks).backward();
            opt.step(1e-2);
        }
        List<Parameter> got = a.softmax().trainableParameters();
        List<Parameter> want = ref.trainableParameters();
        assertThat(got).hasSameSizeAs(want);
        for (int i = 0; i < got.size(); i++) {
            assertThat(got.get(i).value().toDoubles()).as(want.get(i).name()).containsExactly(want.get(i).value().toDoubles());
        }

        assertThat(a.converted().attention(OalProtocol.LAYER)).isSameAs(block);
        assertThat(a.convertedRecord().masks.get(1)).isSameAs(a.softmaxRecord().masks.get(1));
        assertThat(a.convertedRecord().initialA).isEqualTo(a.softmaxRecord().initialA);
        assertThat(a.convertedRecord().blockAfter).isEqualTo(LoraRecord.sha256(block.factor().value().toDoubles()))
                .isEqualTo(a.convertedRecord().blockBefore);
    }

    /** The broken adaptation gives the converted model its own A draw and its own masks. */
    @Test
    void freshLoraFaultDrawsSeparateAdaptersAndMasks() {
        MatchedLora.Adapted a = BrokenOal.freshLoraForConverted(TinyOal.model(4, 5), OalProtocol.LAYER,
                block(new Rng(4)), batch(), new Rng(9), OalProtocol.LORA, 1, 1e-2);
        assertThat(a.convertedRecord().initialA).isNotEqualTo(a.softmaxRecord().initialA);
        assertThat(a.convertedRecord().masks.get(0)).isNotSameAs(a.softmaxRecord().masks.get(0));
    }

    private static MatchedLora.Adapted adapted(long seed) {
        return MatchedLora.adapt(TinyOal.model(4, 5), OalProtocol.LAYER, block(new Rng(4)), batch(), new Rng(seed),
                OalProtocol.LORA, 2, 1e-2);
    }

    private static boolean budget(MatchedLora.Adapted a, int steps) {
        Batch b = batch();
        return OalChecks.matchedBudget(a.softmaxRecord(), a.convertedRecord(), steps, 1e-2, b.batch() * b.seqLen());
    }

    /** The matched-budget judge rejects each field of the records broken on its own (2 steps, lr 1e-2). */
    @Test
    @Breaks(paper = "oal", check = "matched_lora_budget")
    void budgetJudgeRejectsEachBrokenField() {
        assertThat(budget(adapted(9), 2)).isTrue();
        assertThat(budget(adapted(9), 1)).as("other step count").isFalse();
        MatchedLora.Adapted a = adapted(9);
        a.softmaxRecord().trainableNames.clear();
        a.convertedRecord().trainableNames.clear();
        assertThat(budget(a, 2)).as("nothing trainable").isFalse();
        a = adapted(9);
        a.convertedRecord().trainableSizes.set(0, a.convertedRecord().trainableSizes.get(0) + 1);
        assertThat(budget(a, 2)).as("sizes differ").isFalse();
        a = adapted(9);
        a.softmaxRecord().trainableNames.set(0, "model.layers.0.mlp.up_proj.weight");
        a.convertedRecord().trainableNames.set(0, "model.layers.0.mlp.up_proj.weight");
        assertThat(budget(a, 2)).as("a trainable tensor that is not LoRA").isFalse();
        a = adapted(9);
        a.convertedRecord().learningRates.set(1, 2e-2);
        assertThat(budget(a, 2)).as("other learning rate").isFalse();
        a = adapted(9);
        a.softmaxRecord().stepRows.set(0, a.softmaxRecord().stepRows.get(0) + 1);
        assertThat(budget(a, 2)).as("other batch rows").isFalse();
        a = adapted(9);
        a.convertedRecord().masks.set(0, a.convertedRecord().masks.get(1));
        assertThat(budget(a, 2)).as("other dropout masks").isFalse();
        a = adapted(9);
        a.softmaxRecord().masks.set(0, null);
        a.convertedRecord().masks.set(0, null);
        assertThat(budget(a, 2)).as("no masks").isFalse();
        a = adapted(9);
        a.convertedRecord().blockAfter = "changed";
        assertThat(budget(a, 2)).as("the frozen block changed").isFalse();
        // Other adapters (another A draw) with the softmax arm's masks: only initialA differs.
        a = adapted(9);
        MatchedLora.Adapted other = adapted(10);
        other.convertedRecord().masks.clear();
        other.convertedRecord().masks.addAll(a.softmaxRecord().masks);
        assertThat(OalChecks.matchedBudget(a.softmaxRecord(), other.convertedRecord(), 2, 1e-2,
                batch().batch() * batch().seqLen())).as("other initial A").isFalse();
    }
}
