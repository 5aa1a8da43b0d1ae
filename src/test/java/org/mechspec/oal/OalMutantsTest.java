package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.Rng;
import org.mechspec.model.AdamW;
import org.mechspec.model.AttentionBlock;
import org.mechspec.model.Batch;
import org.mechspec.model.DropoutMasks;
import org.mechspec.model.Lora;
import org.mechspec.model.Qwen2Model;
import org.mechspec.spec.Breaks;
import org.mechspec.spec.FlashRule;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;

/** Each OAL check reports false on a deliberately broken mechanism, and true on the real one. */
@Tag("oal")
class OalMutantsTest {
    private static final int ADAPTATION_ROWS = BlockRoles.ADAPTATION * (OalProtocol.SEQUENCE_LENGTH - 1);

    /**
     * A device whose recurrent form counts each unordered pair of groups once instead of twice (M_gh + M_hg read as
     * one of them): its recurrent form runs the CPU twin over M with the off-diagonal entries halved; dense is right.
     */
    static final class PairsCountedOnce implements GroupedQuadraticAttentionOps {
        private static final GroupedQuadraticAttentionOps CPU = CpuGroupedQuadraticAttention.INSTANCE;

        @Override
        public String name() {
            return "mutant";
        }

        @Override
        public double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] g, double[] m) {
            return CPU.dense(s, q, k, v, g, m);
        }

        @Override
        public float[] dense(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] g, float[] m) {
            return CPU.dense(s, q, k, v, g, m);
        }

        @Override
        public double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] g, double[] m) {
            double[] once = m.clone();
            int side = s.side();
            for (int i = 0; i < once.length; i++) {
                int a = i % (side * side) / side;
                int b = i % side;
                once[i] = a == b ? m[i] : m[i] / 2;
            }
            return CPU.recurrent(s, q, k, v, g, once);
        }

        @Override
        public float[] recurrent(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] g, float[] m) {
            float[] once = m.clone();
            int side = s.side();
            for (int i = 0; i < once.length; i++) {
                once[i] = i % (side * side) / side == i % side ? m[i] : m[i] / 2;
            }
            return CPU.recurrent(s, q, k, v, g, once);
        }
    }

    /** A device that leaves the last output element unwritten (still poisoned). */
    static final class UnwrittenLastElement implements GroupedQuadraticAttentionOps {
        @Override
        public String name() {
            return "mutant";
        }

        @Override
        public double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] g, double[] m) {
            double[] out = CpuGroupedQuadraticAttention.INSTANCE.dense(s, q, k, v, g, m);
            out[out.length - 1] = Double.NaN;
            return out;
        }

        @Override
        public float[] dense(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] g, float[] m) {
            float[] out = CpuGroupedQuadraticAttention.INSTANCE.dense(s, q, k, v, g, m);
            out[out.length - 1] = Float.NaN;
            return out;
        }

        @Override
        public double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] g, double[] m) {
            return CpuGroupedQuadraticAttention.INSTANCE.recurrent(s, q, k, v, g, m);
        }

        @Override
        public float[] recurrent(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] g, float[] m) {
            return CpuGroupedQuadraticAttention.INSTANCE.recurrent(s, q, k, v, g, m);
        }
    }

    private static LayerSamples samples() {
        return TinyOal.samples(11, 1, 16, 2, 1, 16, 1.0);
    }

    @Test
    @Breaks(paper = "oal", check = "recurrent_dense_equivalence")
    void mutantRecurrentPairsCountedOnceBreaksRecurrentDenseEquivalence() {
        LayerSamples s = samples();
        Rng rng = new Rng(5);
        int[] groups = TinyOal.groups(rng, 2, 16);
        double[][] l = TinyOal.factors(rng, 2, Grouping.GROUPS, 0.1);
        assertThat(OalChecks.formsAgree(KernelAgreement.measure(CpuGroupedQuadraticAttention.INSTANCE, s, groups, 3, l), 1e-5, 1e-12)).isTrue();
        assertThat(OalChecks.formsAgree(KernelAgreement.measure(new PairsCountedOnce(), s, groups, 3, l), 1e-5, 1e-12)).isFalse();
    }

    @Test
    @Breaks(paper = "oal", check = "kernel_positive_for_any_coefficients")
    void mutantMNotGramBreaksPositivity() {
        LayerSamples s = samples();
        int[] groups = TinyOal.groups(new Rng(6), 2, 16);
        double[][] l = new double[2][16];
        for (double[] head : l) {
            for (int a = 0; a < 4; a++) {
                head[a * 4 + a] = -0.5; // L + Lᵀ = −I: negative definite; L·Lᵀ = I/4
            }
        }
        assertThat(OalChecks.kernelPositive(OalChecks.minSimilarity(s, groups, 3, l))).isTrue();
        assertThat(OalChecks.kernelPositive(OalChecks.minSimilarityFromGram(s, groups, 3, BrokenOal.notGramAll(l, 4))))
                .isFalse();
    }

    @Test
    @Breaks(paper = "oal", check = "calibration_gradient_check")
    void mutantCalibrationGradientIgnoringNormalizerFailsGradientCheck() {
        LayerSamples s = samples();
        int[] groups = Arrays.copyOfRange(TinyOal.groups(new Rng(7), 2, 16), 0, 16);
        double[] l = QuadraticForm.taylorFactor(3);
        HeadObjective real = new HeadObjective(s, 0, groups, 3);
        CalibrationObjective broken = BrokenOal.halvedGradient(real);
        assertThat(OalChecks.gradientMatches(ObjectiveGradientCheck.relativeError(real, l, 1e-5), 1e-6)).isTrue();
        assertThat(OalChecks.gradientMatches(ObjectiveGradientCheck.relativeError(broken, l, 1e-5), 1e-6)).isFalse();
    }

    @Test
    @Breaks(paper = "oal", check = "converted_block_gradient_check")
    void mutantBlockBackwardIgnoringNormalizerFailsBlockGradientCheck() {
        LayerSamples s = TinyOal.samples(12, 1, 8, 2, 1, 8, 1.0);
        Rng rng = new Rng(8);
        int[] groups = TinyOal.groups(rng, 2, 8);
        double[][] l = TinyOal.factors(rng, 2, 3, 0.3);
        ConvertedAttention real = new ConvertedAttention(0, CpuGroupedQuadraticAttention.INSTANCE, groups, 3, l);
        AttentionBlock broken = BrokenOal.backwardWithoutKeyGradient(real);
        double[] w = BlockGradientCheck.mseDirection(real, s);
        assertThat(OalChecks.gradientMatches(BlockGradientCheck.relativeError(real, s, w, 1, 1e-5), 1e-6)).isTrue();
        assertThat(OalChecks.gradientMatches(BlockGradientCheck.relativeError(broken, s, w, 1, 1e-5), 1e-6)).isFalse();
    }

    @Test
    @Breaks(paper = "oal", check = "grouping_is_deterministic")
    void mutantTiesToHigherIndexBreaksTheGroupingRule() {
        double[] c = new double[32]; // every contribution equal: the rule picks dimensions 0.. for group 1
        assertThat(OalChecks.groupingFollowsRule(c, Grouping.assign(c, 1, 32), 1, 32)).isTrue();
        int[] broken = BrokenOal.groupsTyingToHigherIndex(c, 1, 32);
        assertThat(OalChecks.groupingFollowsRule(c, broken, 1, 32)).isFalse();
    }

    @Test
    @Breaks(paper = "oal", check = "test_isolated_from_selection")
    void mutantCalibratingOnTestBlocksBreaksTestIsolation() {
        OalRun real = tinyRun();
        BlockLedger leaky = BrokenOal.calibratedOnTestBlocks(real.ledger(), real.roles());
        assertThat(OalChecks.testIsolated(real.roles(), real.ledger())).isTrue();
        assertThat(OalChecks.testIsolated(real.roles(), leaky)).isFalse();
        assertThat(OalChecks.testUsesOutsideEvaluation(leaky)).isPositive();
    }

    @Test
    @Breaks(paper = "oal", check = "matched_lora_budget")
    void mutantFreshLoraForConvertedBreaksTheMatchedBudget() {
        Batch batch = TinyOal.twoBlockBatch();
        int rows = batch.batch() * batch.seqLen();
        MatchedLora.Adapted real = MatchedLora.adapt(TinyOal.model(4, 5), OalProtocol.LAYER,
                TinyOal.convertedBlock(new Rng(4)), batch, new Rng(9), OalProtocol.LORA, 2, 1e-2);
        MatchedLora.Adapted fresh = BrokenOal.freshLoraForConverted(TinyOal.model(4, 5), OalProtocol.LAYER,
                TinyOal.convertedBlock(new Rng(4)), batch, new Rng(9), OalProtocol.LORA, 2, 1e-2);
        assertThat(OalChecks.matchedBudget(real.softmaxRecord(), real.convertedRecord(), 2, 1e-2, rows)).isTrue();
        assertThat(OalChecks.matchedBudget(fresh.softmaxRecord(), fresh.convertedRecord(), 2, 1e-2, rows)).isFalse();
    }

    @Test
    @Breaks(paper = "oal", check = "negative_result_reported")
    void mutantClaimsOnSeedMeanHidesSeed44AndFailsNegativeResultCheck() throws IOException {
        Manifest manifest = ManifestLoader.forPaper("oal");
        Map<Long, Map<String, Object>> table = OalContracts.seedFileTable(manifest);
        assertThat(OalChecks.negativeResultsComplete(manifest, table, OalClaims.judge(manifest, table))).isTrue();
        OalClaims.Verdict broken = OalClaims.judgeOnSeedMean(manifest, table);
        assertThat(broken.claimsImprovement()).as("on the mean OAL wins both hypotheses").isTrue();
        assertThat(OalChecks.negativeResultsComplete(manifest, table, broken)).isFalse();
    }

    @Test
    @Breaks(paper = "oal", check = "oal_dense_cuda_flash_rule")
    void mutantUnwrittenElementFailsDenseDifferential() {
        OalChecks.DifferentialCase c = OalChecks.differentialCase(3, 1, 9, 2, 1, 16);
        assertThat(OalChecks.differential(CpuGroupedQuadraticAttention.INSTANCE, c, false, false).holds()).isTrue();
        assertThat(OalChecks.differential(CpuGroupedQuadraticAttention.INSTANCE, c, false, true).holds()).isTrue();
        assertThat(OalChecks.differential(new UnwrittenLastElement(), c, false, false).holds()).isFalse();
        assertThat(OalChecks.differential(new UnwrittenLastElement(), c, false, true).holds()).isFalse();
    }

    @Test
    @Breaks(paper = "oal", check = "oal_recurrent_cuda_flash_rule")
    void mutantPairsCountedOnceFailsRecurrentDifferential() {
        OalChecks.DifferentialCase c = OalChecks.differentialCase(4, 1, 9, 2, 1, 16);
        assertThat(OalChecks.differential(CpuGroupedQuadraticAttention.INSTANCE, c, true, true).holds()).isTrue();
        FlashRule.Verdict broken = OalChecks.differential(new PairsCountedOnce(), c, true, true);
        assertThat(broken.holds()).as("%s", broken).isFalse();
    }

    // ------------------------------------------------------------ recurrent_dense_equivalence, property half

    /** The input that failed the old fixed 1e-5 about 3% of runs: within the rounding bound now; a miscounted pair is not. */
    @Test
    @Breaks(paper = "oal", check = "recurrent_dense_equivalence")
    void flakyInputPassesTheRoundingBoundWhilePairsCountedOnceFailsIt() {
        TinyOal.AgreementCase c = TinyOal.agreementCase(-6652156641517818303L, 19, 1, 2);
        KernelAgreement fixed = KernelAgreement.measure(CpuGroupedQuadraticAttention.INSTANCE, c.samples(), c.groups(), 3, c.factors());
        assertThat(OalChecks.formsAgree(fixed, 1e-5, 1e-12)).as("the old fixed tolerance rejects a correct form: %s", fixed)
                .isFalse();
        RoundingAgreement real = RoundingAgreement.measure(CpuGroupedQuadraticAttention.INSTANCE, c.samples(), c.groups(), 3, c.factors());
        RoundingAgreement broken = RoundingAgreement.measure(new PairsCountedOnce(), c.samples(), c.groups(), 3, c.factors());
        assertThat(real.holds()).as("%s", real).isTrue();
        assertThat(broken.holds()).as("%s", broken).isFalse();
    }

    // ------------------------------------------------------------ converted_layer_is_calibrated_oal

    /** The survivor without setAttention leaves the "converted" model a softmax model trained like the softmax arm. */
    @Test
    @Breaks(paper = "oal", check = "converted_layer_is_calibrated_oal")
    void softmaxLayerPassedOffAsConvertedFailsTheLayerCheck() {
        TinyOal.Adaptation a = TinyOal.Adaptation.of(5);
        int[] blocks = {0, 1};
        assertThat(DefinitionChecks.convertedLayer(a.adapted().converted(), a.blocks(), blocks, a.groups(), 3, a.factors())
                .holds()).isTrue();
        DefinitionChecks.LayerError broken = DefinitionChecks.convertedLayer(a.adapted().softmax(), a.blocks(), blocks,
                a.groups(), 3, a.factors());
        assertThat(broken.holds()).as("%s", broken).isFalse();
        Qwen2Model headZeroEverywhere = a.adapted().converted().copy(); // every head computed with head 0's factor
        headZeroEverywhere.setAttention(OalProtocol.LAYER, new ConvertedAttention(OalProtocol.LAYER,
                CpuGroupedQuadraticAttention.INSTANCE, a.groups(), 3, new double[][] {a.factors()[0], a.factors()[0]}));
        assertThat(DefinitionChecks.convertedLayer(headZeroEverywhere, a.blocks(), blocks, a.groups(), 3, a.factors())
                .holds()).isFalse();
    }

    // ------------------------------------------------------------ lora_steps_move_adapters

    /** Records written step by step as MatchedLora writes them, around steps that train nothing (or one arm only). */
    @Test
    @Breaks(paper = "oal", check = "lora_steps_move_adapters")
    void ledgerWithoutStepsFailsTheLoraStepCheck() {
        TinyOal.Adaptation real = TinyOal.Adaptation.of(6);
        assertThat(DefinitionChecks.loraStepsMoveAdapters(real.adapted().softmaxRecord(), real.adapted().convertedRecord(),
                OalProtocol.LORA_STEPS)).isTrue();
        for (boolean trainSoftmax : new boolean[] {false, true}) {
            Rng rng = new Rng(6);
            Qwen2Model softmax = TinyOal.model(6, 5);
            Lora.attach(softmax, OalProtocol.LORA, rng);
            Qwen2Model converted = softmax.copy();
            ConvertedAttention block = new ConvertedAttention(OalProtocol.LAYER, CpuGroupedQuadraticAttention.INSTANCE, real.groups(),
                    3, real.factors());
            converted.setAttention(OalProtocol.LAYER, block);
            LoraRecord s = new LoraRecord(softmax, null);
            LoraRecord c = new LoraRecord(converted, block);
            Batch batch = Batch.nextToken(real.blocks().blocks(new int[] {2, 3, 4, 5, 6, 7, 8, 9}), OalProtocol.SEQUENCE_LENGTH);
            AdamW optimizer = AdamW.withoutWeightDecay(softmax.trainableParameters());
            for (int step = 0; step < OalProtocol.LORA_STEPS; step++) {
                DropoutMasks masks = DropoutMasks.draw(softmax, ADAPTATION_ROWS, rng);
                if (trainSoftmax) {
                    softmax.zeroGrad();
                    softmax.forward(batch, masks).backward();
                    optimizer.step(OalProtocol.LORA_LEARNING_RATE);
                }
                s.step(OalProtocol.LORA_LEARNING_RATE, ADAPTATION_ROWS, masks);
                c.step(OalProtocol.LORA_LEARNING_RATE, ADAPTATION_ROWS, masks);
            }
            s.finish(null);
            c.finish(block);
            assertThat(OalChecks.matchedBudget(s, c, OalProtocol.LORA_STEPS, OalProtocol.LORA_LEARNING_RATE, ADAPTATION_ROWS))
                    .as("the budget check alone passes it").isTrue();
            assertThat(DefinitionChecks.loraStepsMoveAdapters(s, c, OalProtocol.LORA_STEPS))
                    .as("softmax trained: %s", trainSoftmax).isFalse();
        }
    }

    // ------------------------------------------------------------ calibration_lowers_loss

    /** Adam reads the gradient negated: it climbs. */
    record Uphill(CalibrationObjective inner) implements CalibrationObjective {
        @Override
        public int side() {
            return inner.side();
        }

        @Override
        public double evaluate(double[] l, double[] grad) {
            double loss = inner.evaluate(l, grad);
            if (grad != null) {
                for (int i = 0; i < grad.length; i++) {
                    grad[i] = -grad[i];
                }
            }
            return loss;
        }
    }

    /** A zero gradient: Adam's update is 0/(0 + ε), as if its loop never ran. */
    record Frozen(CalibrationObjective inner) implements CalibrationObjective {
        @Override
        public int side() {
            return inner.side();
        }

        @Override
        public double evaluate(double[] l, double[] grad) {
            double loss = inner.evaluate(l, grad);
            if (grad != null) {
                Arrays.fill(grad, 0.0);
            }
            return loss;
        }
    }

    private static LayerSamples zeroTarget(LayerSamples s) {
        return new LayerSamples(s.blocks(), s.seqLen(), s.heads(), s.kvHeads(), s.headDim(), s.q(), s.k(), s.v(),
                new double[s.softmax().length]);
    }

    private static Calibration.HeadFit[] fits(LayerSamples fitOn, int[] groups, java.util.function.UnaryOperator<CalibrationObjective> wrap) {
        double[][][] noise = Calibration.drawNoise(new Rng(3), fitOn.heads(), Grouping.GROUPS + 1);
        Calibration.HeadFit[] fits = new Calibration.HeadFit[fitOn.heads()];
        for (int h = 0; h < fits.length; h++) {
            HeadObjective objective = new HeadObjective(fitOn, h, Arrays.copyOfRange(groups, h * 16, (h + 1) * 16), 3);
            fits[h] = Calibration.calibrateHead(wrap.apply(objective), objective, noise[h]);
        }
        return fits;
    }

    @Test
    @Breaks(paper = "oal", check = "calibration_lowers_loss")
    void calibrationThatDoesNotDescendFailsTheLossCheck() {
        LayerSamples s = samples();
        int[] groups = TinyOal.groups(new Rng(9), 2, 16);
        assertThat(DefinitionChecks.lowersLoss(DefinitionChecks.worstGroupedLossRatio(s, groups, fits(s, groups, o -> o))))
                .isTrue();
        assertThat(DefinitionChecks.worstGroupedLossRatio(s, groups, fits(s, groups, Frozen::new))).isEqualTo(1.0);
        assertThat(DefinitionChecks.lowersLoss(DefinitionChecks.worstGroupedLossRatio(s, groups, fits(s, groups, Uphill::new))))
                .isFalse();
        assertThat(DefinitionChecks.lowersLoss(DefinitionChecks.worstGroupedLossRatio(s, groups, fits(zeroTarget(s), groups,
                o -> o)))).as("fitted to a zero target").isFalse();
        double[][] global = new double[2][];
        double[][] uphill = new double[2][];
        for (int h = 0; h < 2; h++) {
            global[h] = Calibration.globalHead(new HeadObjective(s, h, new int[16], 1));
            uphill[h] = Calibration.globalHead(new Uphill(new HeadObjective(s, h, new int[16], 1)));
        }
        assertThat(DefinitionChecks.lowersLoss(DefinitionChecks.worstGlobalLossRatio(s, global))).isTrue();
        assertThat(DefinitionChecks.lowersLoss(DefinitionChecks.worstGlobalLossRatio(s, uphill))).isFalse();
    }

    @Test
    @Breaks(paper = "oal", check = "calibration_lowers_loss")
    void brokenAdamOrObjectiveFailsTheLossCheckProperties() {
        Rng rng = new Rng(10);
        double[] start = TinyOal.factors(rng, 1, 3, 0.3)[0];
        TinyOal.FarQuadratic f = TinyOal.FarQuadratic.around(start, 4, rng);
        assertThat(f.loss(Calibration.adam(f, start, Calibration.STEPS))).isLessThan(f.loss(start));
        assertThat(f.loss(Calibration.adam(new Frozen(f), start, Calibration.STEPS))).isEqualTo(f.loss(start));
        assertThat(f.loss(Calibration.adam(new Uphill(f), start, Calibration.STEPS))).isGreaterThan(f.loss(start));

        LayerSamples s = samples();
        int[] headGroups = Arrays.copyOfRange(TinyOal.groups(new Rng(11), 2, 16), 16, 32);
        double[] l = TinyOal.factors(new Rng(12), 1, 3, 0.3)[0];
        double tolerance = DefinitionChecks.headLossTolerance(s, 1, headGroups, l);
        double definition = DefinitionChecks.headLoss(s, 1, headGroups, l);
        assertThat(Math.abs(new HeadObjective(s, 1, headGroups, 3).loss(l) - definition)).isLessThanOrEqualTo(tolerance);
        assertThat(Math.abs(new HeadObjective(zeroTarget(s), 1, headGroups, 3).loss(l) - definition))
                .as("objective with a zero target").isGreaterThan(tolerance);
    }

    // ------------------------------------------------------------ grouping_contributions_match_definition

    @Test
    @Breaks(paper = "oal", check = "grouping_contributions_match_definition")
    void contributionsWithWrongSignOrInOneHeadsSlotFailTheDefinition() {
        LayerSamples s = TinyOal.samples(13, 2, 8, 4, 2, 16, 1.0);
        double[] want = DefinitionChecks.contributionsByDefinition(s);
        double tolerance = DefinitionChecks.contributionTolerance(s.blocks() * s.seqLen());
        double[] real = Grouping.contributions(s);
        assertThat(DefinitionChecks.contributionRelativeError(real, want)).isLessThanOrEqualTo(tolerance);
        double[] negated = real.clone();
        for (int i = 0; i < negated.length; i++) {
            negated[i] = -negated[i];
        }
        assertThat(DefinitionChecks.contributionRelativeError(negated, want)).isGreaterThan(tolerance);
        double[] oneSlot = new double[real.length]; // index h·d written as h/d: every head lands in head 0, the last one stays
        System.arraycopy(real, 3 * 16, oneSlot, 0, 16);
        assertThat(DefinitionChecks.contributionRelativeError(oneSlot, want)).isGreaterThan(tolerance);
    }

    private static OalRun tinyRun() {
        return OalProtocol.run(42, CpuBackend.INSTANCE, TinyOal.model(3, 5), TinyOal.blocks(1, 32 * 30), TinyOal.blocks(2, 32 * 5));
    }

    /**
     * Right but different: OAL written plainly from its definition (a pair at a time, fp64 and float arithmetic)
     * passes every forms property half in every regime; the bound does not condemn another rounding order.
     */
    @Test
    void plainDefinitionPassesTheFormsPropertyHalves() {
        OalContracts.formsWithinBoundOverRegimes(new PlainOalOps(PlainOalOps.Fault.NONE), 40, OalRegimes.BUDGET, OalContracts.Form.BOTH);
    }

    /** Keys in tiles of 32 with a partial last tile skipped: the old shapes (≤ 24 tokens) and the seeded 32 never showed it. */
    @Test
    @Breaks(paper = "oal", check = "recurrent_dense_equivalence")
    @Breaks(paper = "oal", check = "oal_dense_cuda_flash_rule")
    @Breaks(paper = "oal", check = "oal_recurrent_cuda_flash_rule")
    void formsDroppingAPartialLastTileFailTheFormsPropertyHalves() {
        rejectedOnlyByTheRegimes(PlainOalOps.Fault.PARTIAL_TILE_DROPPED);
    }

    /** q·k over at most 64 channels: the old shapes' head dims (≤ 32) and the seeded 32 never showed it. */
    @Test
    @Breaks(paper = "oal", check = "recurrent_dense_equivalence")
    @Breaks(paper = "oal", check = "oal_dense_cuda_flash_rule")
    @Breaks(paper = "oal", check = "oal_recurrent_cuda_flash_rule")
    void formsCappedAt64ChannelsFailTheFormsPropertyHalves() {
        rejectedOnlyByTheRegimes(PlainOalOps.Fault.CHANNELS_CAPPED_AT_64);
    }

    private static void rejectedOnlyByTheRegimes(PlainOalOps.Fault fault) {
        PlainOalOps broken = new PlainOalOps(fault);
        TinyOal.AgreementCase old = TinyOal.agreementCase(42, 24, 4, 3);
        assertThat(RoundingAgreement.measure(broken, old.samples(), old.groups(), Grouping.GROUPS, old.factors()).holds())
                .as("%s on 24 tokens of head dim 32", fault).isTrue();
        for (OalContracts.Form form : OalContracts.Form.values()) {
            assertThatThrownBy(() -> OalContracts.formsWithinBoundOverRegimes(broken, 40, OalRegimes.BUDGET, form)).as("%s, %s", fault, form)
                    .isInstanceOf(AssertionError.class).hasMessageContaining("worst_error_over_bound");
        }
    }
}
