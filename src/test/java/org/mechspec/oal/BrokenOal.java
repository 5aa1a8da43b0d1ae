package org.mechspec.oal;

import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.mechspec.compute.Rng;
import org.mechspec.model.AdamW;
import org.mechspec.model.AttentionBlock;
import org.mechspec.model.Batch;
import org.mechspec.model.DropoutMasks;
import org.mechspec.model.HeadLayout;
import org.mechspec.model.Lora;
import org.mechspec.model.LoraConfig;
import org.mechspec.model.Parameter;
import org.mechspec.model.Qwen2Model;
import org.mechspec.model.Tensor;

/**
 * Broken parts of the OAL mechanism for the mutant tests: an objective and a block handed to the gradient checks
 * through the interfaces the mechanism is written against, and the intermediates a broken protocol would hand to
 * a check (a quadratic form that is not a Gram matrix, a grouping with the other tie rule, a ledger with the test
 * split in calibration, a converted model adapted with its own LoRA draw).
 */
final class BrokenOal {
    private BrokenOal() {
    }

    /** M = L + Lᵀ (lower triangle of L) instead of L·Lᵀ: not positive semi-definite in general. */
    static double[] notGramAll(double[][] lPerHead, int side) {
        double[] out = new double[lPerHead.length * side * side];
        for (int h = 0; h < lPerHead.length; h++) {
            double[] l = lPerHead[h];
            for (int a = 0; a < side; a++) {
                for (int b = 0; b < side; b++) {
                    out[h * side * side + a * side + b] = (b <= a ? l[a * side + b] : 0.0) + (a <= b ? l[b * side + a] : 0.0);
                }
            }
        }
        return out;
    }

    /** The objective with ∂loss/∂L = (∂loss/∂M)·L: the chain rule through M = L·Lᵀ without its factor 2. */
    static CalibrationObjective halvedGradient(CalibrationObjective real) {
        return new CalibrationObjective() {
            @Override
            public int side() {
                return real.side();
            }

            @Override
            public double evaluate(double[] l, double[] grad) {
                double loss = real.evaluate(l, grad);
                if (grad != null) {
                    for (int i = 0; i < grad.length; i++) {
                        grad[i] /= 2;
                    }
                }
                return loss;
            }
        };
    }

    /** The block whose backward forgets that the similarities depend on the keys (∂k is never written). */
    static AttentionBlock backwardWithoutKeyGradient(AttentionBlock real) {
        return new AttentionBlock() {
            @Override
            public Gradient forward(HeadLayout layout, Tensor q, Tensor k, Tensor v, Tensor out) {
                Gradient g = real.forward(layout, q, k, v, out);
                return (dOut, dq, dk, dv) -> g.accumulate(dOut, dq, Tensor.zeros(dk.precision(), dk.size()), dv);
            }

            @Override
            public List<Parameter> parameters() {
                return real.parameters();
            }

            @Override
            public AttentionBlock copy() {
                return backwardWithoutKeyGradient(real.copy());
            }
        };
    }

    /** Grouping whose ranking breaks contribution ties towards the higher dimension index. */
    static int[] groupsTyingToHigherIndex(double[] contributions, int heads, int headDim) {
        int[] groups = new int[heads * headDim];
        for (int h = 0; h < heads; h++) {
            double[] c = Arrays.copyOfRange(contributions, h * headDim, (h + 1) * headDim);
            Integer[] ranked = new Integer[headDim];
            for (int i = 0; i < headDim; i++) {
                ranked[i] = i;
            }
            Arrays.sort(ranked, Comparator.comparingDouble((Integer i) -> c[i]).reversed()
                    .thenComparing(Comparator.reverseOrder()));
            int outliers = Grouping.outlierCount(headDim);
            int secondary = Grouping.secondaryCount(headDim);
            for (int r = 0; r < headDim; r++) {
                groups[h * headDim + ranked[r]] = r < outliers ? Grouping.OUTLIERS
                        : r < outliers + secondary ? Grouping.SECONDARY : Grouping.REST;
            }
        }
        return groups;
    }

    /** The ledger of a protocol that calibrated on the test blocks instead of the calibration blocks. */
    static BlockLedger calibratedOnTestBlocks(BlockLedger real, BlockRoles roles) {
        BlockLedger leaky = new BlockLedger();
        for (BlockLedger.Use u : real.uses()) {
            if (u.phase() == BlockLedger.Phase.CALIBRATION) {
                leaky.record(BlockLedger.Phase.CALIBRATION, BlockLedger.Split.TEST, roles.test());
            } else {
                leaky.record(u.phase(), u.split(), u.blocks());
            }
        }
        return leaky;
    }

    /**
     * Matched LoRA done wrong: the converted model gets its own A draw and its own dropout masks instead of the
     * softmax model's (the draws follow the softmax model's in {@code rng}).
     */
    static MatchedLora.Adapted freshLoraForConverted(Qwen2Model base, int layer, ConvertedAttention block, Batch batch,
                                                     Rng rng, LoraConfig lora, int steps, double learningRate) {
        Qwen2Model softmax = base.copy();
        Lora.attach(softmax, lora, rng);
        Qwen2Model converted = base.copy();
        converted.setAttention(layer, block);
        Lora.attach(converted, lora, rng);
        LoraRecord softmaxRecord = new LoraRecord(softmax, null);
        LoraRecord convertedRecord = new LoraRecord(converted, block);
        int rows = batch.batch() * batch.seqLen();
        AdamW softmaxOpt = AdamW.withoutWeightDecay(softmax.trainableParameters());
        AdamW convertedOpt = AdamW.withoutWeightDecay(converted.trainableParameters());
        for (int step = 0; step < steps; step++) {
            DropoutMasks masks = DropoutMasks.draw(softmax, rows, rng);
            DropoutMasks convertedMasks = DropoutMasks.draw(converted, rows, rng);
            trainStep(softmax, softmaxOpt, batch, masks, learningRate);
            softmaxRecord.step(learningRate, rows, masks);
            trainStep(converted, convertedOpt, batch, convertedMasks, learningRate);
            convertedRecord.step(learningRate, rows, convertedMasks);
        }
        softmaxRecord.finish(null);
        convertedRecord.finish(block);
        return new MatchedLora.Adapted(softmax, converted, softmaxRecord, convertedRecord);
    }

    private static void trainStep(Qwen2Model model, AdamW optimizer, Batch batch, DropoutMasks masks, double lr) {
        model.zeroGrad();
        model.forward(batch, masks).backward();
        optimizer.step(lr);
    }
}
