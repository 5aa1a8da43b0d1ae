package org.mechspec.oal;

import org.mechspec.compute.Rng;
import org.mechspec.model.AdamW;
import org.mechspec.model.Batch;
import org.mechspec.model.DropoutMasks;
import org.mechspec.model.Lora;
import org.mechspec.model.LoraConfig;
import org.mechspec.model.Qwen2Model;

/**
 * The matched LoRA budget (protocols.md, OAL): the softmax model and the converted model (coefficients frozen) get the
 * same adapters — one draw of A matrices, copied — and the same AdamW steps on the same batch with the same
 * dropout mask per step. A and the masks come from {@code rng} in that order.
 */
final class MatchedLora {
    private MatchedLora() {
    }

    record Adapted(Qwen2Model softmax, Qwen2Model converted, LoraRecord softmaxRecord, LoraRecord convertedRecord) {
    }

    static Adapted adapt(Qwen2Model base, int layer, ConvertedAttention block, Batch batch, Rng rng, LoraConfig lora,
                         int steps, double learningRate) {
        Qwen2Model softmax = base.copy();
        Lora.attach(softmax, lora, rng);
        Qwen2Model converted = softmax.copy(); // same A matrices, B = 0, base frozen
        converted.setAttention(layer, block);
        LoraRecord softmaxRecord = new LoraRecord(softmax, null);
        LoraRecord convertedRecord = new LoraRecord(converted, block);
        int rows = batch.batch() * batch.seqLen();
        AdamW softmaxOpt = AdamW.withoutWeightDecay(softmax.trainableParameters());
        AdamW convertedOpt = AdamW.withoutWeightDecay(converted.trainableParameters());
        for (int step = 0; step < steps; step++) {
            DropoutMasks masks = DropoutMasks.draw(softmax, rows, rng);
            trainStep(softmax, softmaxOpt, batch, masks, learningRate);
            softmaxRecord.step(learningRate, rows, masks);
            trainStep(converted, convertedOpt, batch, masks, learningRate);
            convertedRecord.step(learningRate, rows, masks);
        }
        softmaxRecord.finish(null);
        convertedRecord.finish(block);
        return new Adapted(softmax, converted, softmaxRecord, convertedRecord);
    }

    private static void trainStep(Qwen2Model model, AdamW optimizer, Batch batch, DropoutMasks masks, double lr) {
        model.zeroGrad();
        model.forward(batch, masks).backward();
        optimizer.step(lr);
    }
}
