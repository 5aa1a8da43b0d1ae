package org.mechspec.oal;

import java.util.Arrays;
import org.mechspec.data.TokenBlocks;
import org.mechspec.model.Precision;
import org.mechspec.model.Qwen2Model;
import org.mechspec.spec.FlashRule;

/**
 * Predicates that compare the mechanism with its definition, computed independently: the converted model's layer
 * against the pairwise oracle of the calibrated factors, calibration against the loss of its start, the grouping
 * contributions against their formula, LoRA steps against the adapters they must move.
 */
final class DefinitionChecks {
    private DefinitionChecks() {
    }

    // ------------------------------------------------------------ lora_steps_move_adapters

    /**
     * Both arms recorded exactly {@code steps} steps and every one of them moved the arm's trainable tensors (an L2
     * change > 0 read from the model): a step that trained nothing, in either arm, fails.
     */
    static boolean loraStepsMoveAdapters(LoraRecord softmax, LoraRecord converted, int steps) {
        return movingSteps(softmax) == steps && movingSteps(converted) == steps
                && softmax.stepChanges.size() == steps && converted.stepChanges.size() == steps;
    }

    /** Steps whose change of the trainable tensors was positive (and finite). */
    static long movingSteps(LoraRecord r) {
        return r.stepChanges.stream().filter(c -> c > 0 && Double.isFinite(c)).count();
    }

    /** The smallest step change, 0 when no step was recorded. */
    static double minStepChange(LoraRecord r) {
        return r.stepChanges.stream().mapToDouble(Double::doubleValue).min().orElse(0.0);
    }

    // ------------------------------------------------------------ converted_layer_is_calibrated_oal

    /** How far a model's layer output is from the grouped-quadratic attention of given factors, and that over its bound. */
    record LayerError(double maxError, double boundRatio) {
        boolean holds() {
            return boundRatio <= 1; // NaN fails
        }
    }

    /**
     * Runs {@code model} on some blocks and compares what layer {@value OalProtocol#LAYER} wrote (what o_proj reads)
     * with the pairwise oracle of the calibrated factors on that layer's own q, k, v. The block computes the dense form
     * in fp64 and stores it in the model's precision (unit roundoff u_s), so
     * |out − oracle| ≤ u_s·|oracle| + (1 + u_s)·(e_form + e_oracle), the e being {@link PairwiseOracle#errorBound} in fp64.
     */
    static LayerError convertedLayer(Qwen2Model model, TokenBlocks blocks, int[] indices, int[] groups, int groupCount,
                                     double[][] l) {
        LayerSamples s = OalProtocol.samples(model, blocks, indices, new BlockLedger(), BlockLedger.Phase.VALIDATION,
                BlockLedger.Split.VALIDATION);
        QuadraticAttentionShape shape = s.shape(groupCount);
        double[] oracle = PairwiseOracle.attention(shape, s.q(), s.k(), s.v(), groups, l);
        double[] e64 = PairwiseOracle.errorBound(shape, s.q(), s.k(), s.v(), groups, l, FlashRule.FP64_UNIT_ROUNDOFF);
        double store = model.precision() == Precision.FP32 ? FlashRule.FP32_UNIT_ROUNDOFF : FlashRule.FP64_UNIT_ROUNDOFF;
        double[] out = s.softmax(); // LayerSamples names the layer's attention output so; here it is the converted one
        double maxError = 0.0;
        double ratio = 0.0;
        for (int i = 0; i < out.length; i++) {
            double err = Math.abs(out[i] - oracle[i]);
            // An exact match holds under any bound, a zero one too (a zero value channel: oracle, bound, output 0).
            double r = err == 0 ? 0.0 : err / (store * Math.abs(oracle[i]) + (1 + store) * 2 * e64[i]);
            if (Double.isNaN(r)) {
                return new LayerError(err, r);
            }
            maxError = Math.max(maxError, err);
            ratio = Math.max(ratio, r);
        }
        return new LayerError(maxError, ratio);
    }

    // ------------------------------------------------------------ calibration_lowers_loss

    /**
     * One head's calibration loss from its definition, independently of {@link HeadObjective}: the mean over the
     * head's tokens and dimensions of (pairwise oracle output from L − softmax output)².
     */
    static double headLoss(LayerSamples s, int head, int[] headGroups, double[] l) {
        int d = s.headDim();
        int side = (int) Math.round(Math.sqrt(l.length));
        int kv = head * s.kvHeads() / s.heads();
        double[] sims = new double[s.seqLen()];
        double sum = 0.0;
        for (int b = 0; b < s.blocks(); b++) {
            for (int t = 0; t < s.seqLen(); t++) {
                int qOff = s.queryOffset(b, t, head);
                double den = 0.0;
                for (int j = 0; j <= t; j++) {
                    sims[j] = PairwiseOracle.similarity(s.q(), qOff, s.k(), s.kvOffset(b, j, kv), headGroups, 0, d, l, side);
                    den += sims[j];
                }
                for (int c = 0; c < d; c++) {
                    double acc = 0.0;
                    for (int j = 0; j <= t; j++) {
                        acc += sims[j] * s.v()[s.kvOffset(b, j, kv) + c];
                    }
                    double diff = acc / den - s.softmax()[qOff + c];
                    sum += diff * diff;
                }
            }
        }
        return sum / ((double) s.blocks() * s.seqLen() * d);
    }

    /**
     * How far two fp64 computations of {@link #headLoss} may differ: each output element o_i of either carries at most
     * e_i ({@link PairwiseOracle#errorBound}), so with diff_i = o_i − target_i the losses differ by at most
     * (1/n)·Σ_i (2·|diff_i|·2e_i + (2e_i)²) + 2γ_n·loss, γ_n = n·u/(1 − n·u) for the sums of n squares.
     */
    static double headLossTolerance(LayerSamples s, int head, int[] headGroups, double[] l) {
        int d = s.headDim();
        int[] groups = new int[s.heads() * d];
        double[][] factors = new double[s.heads()][];
        for (int h = 0; h < s.heads(); h++) {
            System.arraycopy(headGroups, 0, groups, h * d, d);
            factors[h] = l;
        }
        QuadraticAttentionShape shape = s.shape((int) Math.round(Math.sqrt(l.length)) - 1);
        double[] oracle = PairwiseOracle.attention(shape, s.q(), s.k(), s.v(), groups, factors);
        double[] e = PairwiseOracle.errorBound(shape, s.q(), s.k(), s.v(), groups, factors, FlashRule.FP64_UNIT_ROUNDOFF);
        double n = (double) s.blocks() * s.seqLen() * d;
        double gamma = n * FlashRule.FP64_UNIT_ROUNDOFF / (1 - n * FlashRule.FP64_UNIT_ROUNDOFF);
        double sum = 0.0;
        double loss = 0.0;
        for (int b = 0; b < s.blocks(); b++) {
            for (int t = 0; t < s.seqLen(); t++) {
                int off = s.queryOffset(b, t, head);
                for (int c = 0; c < d; c++) {
                    double diff = Math.abs(oracle[off + c] - s.softmax()[off + c]);
                    double err = 2 * e[off + c];
                    sum += 2 * diff * err + err * err;
                    loss += diff * diff;
                }
            }
        }
        return sum / n + 2 * gamma * loss / n;
    }

    /** loss(fitted) / loss(start) from {@link #headLoss}: below 1 when fitting lowered the loss. */
    static double lossRatio(LayerSamples s, int head, int[] headGroups, double[] start, double[] fitted) {
        return headLoss(s, head, headGroups, fitted) / headLoss(s, head, headGroups, start);
    }

    /** The worst (largest) loss ratio over every initialization of every head's grouped fit. */
    static double worstGroupedLossRatio(LayerSamples s, int[] groups, Calibration.HeadFit[] fits) {
        int d = s.headDim();
        double worst = 0.0;
        for (int h = 0; h < fits.length; h++) {
            int[] headGroups = Arrays.copyOfRange(groups, h * d, (h + 1) * d);
            for (int p = 0; p < fits[h].starts().length; p++) {
                worst = worstOf(worst, lossRatio(s, h, headGroups, fits[h].starts()[p], fits[h].fitted()[p]));
            }
        }
        return worst;
    }

    /** The worst loss ratio of the global baseline (G = 1) over every head, from its Taylor start. */
    static double worstGlobalLossRatio(LayerSamples s, double[][] globalFactors) {
        double worst = 0.0;
        for (int h = 0; h < globalFactors.length; h++) {
            worst = worstOf(worst, lossRatio(s, h, new int[s.headDim()], QuadraticForm.taylorFactor(1), globalFactors[h]));
        }
        return worst;
    }

    private static double worstOf(double a, double b) {
        return Double.isNaN(a) || Double.isNaN(b) ? Double.NaN : Math.max(a, b);
    }

    /** Fitting lowered every loss: ratio strictly below 1 (an unchanged factor gives exactly 1). */
    static boolean lowersLoss(double worstRatio) {
        return worstRatio < 1;
    }

    // ------------------------------------------------------------ grouping_contributions_match_definition

    /**
     * c_i = mean_t|q_t,i|·mean_t|k_t,i| per head from its definition, accumulated token by token over all heads at
     * once (not head by head as {@link Grouping#contributions} does), each query head reading KV head h·kv/heads.
     */
    static double[] contributionsByDefinition(LayerSamples s) {
        int d = s.headDim();
        double[] sumQ = new double[s.heads() * d];
        double[] sumK = new double[s.kvHeads() * d];
        int tokens = s.blocks() * s.seqLen();
        for (int token = 0; token < tokens; token++) {
            for (int i = 0; i < sumQ.length; i++) {
                sumQ[i] += Math.abs(s.q()[token * sumQ.length + i]);
            }
            for (int i = 0; i < sumK.length; i++) {
                sumK[i] += Math.abs(s.k()[token * sumK.length + i]);
            }
        }
        double[] c = new double[sumQ.length];
        for (int h = 0; h < s.heads(); h++) {
            int kv = h * s.kvHeads() / s.heads();
            for (int i = 0; i < d; i++) {
                c[h * d + i] = (sumQ[h * d + i] / tokens) * (sumK[kv * d + i] / tokens);
            }
        }
        return c;
    }

    /** max_i |got_i − want_i| / want_i (0 where both are 0; infinite where only want is). */
    static double contributionRelativeError(double[] got, double[] want) {
        if (got.length != want.length) {
            return Double.POSITIVE_INFINITY;
        }
        double worst = 0.0;
        for (int i = 0; i < want.length; i++) {
            double err = Math.abs(got[i] - want[i]);
            double r = err == 0 ? 0.0 : err / want[i];
            if (Double.isNaN(r)) {
                return r;
            }
            worst = Math.max(worst, r);
        }
        return worst;
    }

    /**
     * The rounding allowed between two computations of the same contribution from n tokens: each takes two sums of n
     * non-negative terms (γ_{n−1} each), two divisions and a product, so they differ by at most (4n + 6)·u relative.
     */
    static double contributionTolerance(int tokens) {
        return (4.0 * tokens + 6) * FlashRule.FP64_UNIT_ROUNDOFF;
    }
}
