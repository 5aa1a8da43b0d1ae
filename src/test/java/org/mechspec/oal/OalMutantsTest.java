package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.Arrays;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.CpuLinearAttention;
import org.mechspec.compute.LinearAttentionOps;
import org.mechspec.compute.QuadraticAttentionShape;
import org.mechspec.compute.Rng;
import org.mechspec.spec.FlashRule;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;

/** Each OAL check reports false on a deliberately broken mechanism, and true on the real one. */
@Tag("oal")
class OalMutantsTest {
    private static final int ADAPTATION_ROWS = BlockRoles.ADAPTATION * (OalProtocol.SEQUENCE_LENGTH - 1);

    /** The recurrent state stores each unordered pair k_i·k_j once but counts it once instead of twice. */
    static final class PairsCountedOnce extends CpuLinearAttention {
        @Override
        protected double offDiagonalPairWeight() {
            return 1.0;
        }
    }

    /** A device that leaves the last output element unwritten (still poisoned). */
    static final class UnwrittenLastElement implements LinearAttentionOps {
        @Override
        public String name() {
            return "mutant";
        }

        @Override
        public double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] g, double[] m) {
            double[] out = CpuLinearAttention.INSTANCE.dense(s, q, k, v, g, m);
            out[out.length - 1] = Double.NaN;
            return out;
        }

        @Override
        public float[] dense(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] g, float[] m) {
            float[] out = CpuLinearAttention.INSTANCE.dense(s, q, k, v, g, m);
            out[out.length - 1] = Float.NaN;
            return out;
        }

        @Override
        public double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] g, double[] m) {
            return CpuLinearAttention.INSTANCE.recurrent(s, q, k, v, g, m);
        }

        @Override
        public float[] recurrent(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] g, float[] m) {
            return CpuLinearAttention.INSTANCE.recurrent(s, q, k, v, g, m);
        }
    }

    private static LayerSamples samples() {
        return TinyOal.samples(11, 1, 16, 2, 1, 16, 1.0);
    }

    @Test
    void mutantRecurrentPairsCountedOnceBreaksRecurrentDenseEquivalence() {
        LayerSamples s = samples();
        Rng rng = new Rng(5);
        int[] groups = TinyOal.groups(rng, 2, 16);
        double[][] l = TinyOal.factors(rng, 2, Grouping.GROUPS, 0.1);
        assertThat(OalChecks.formsAgree(KernelAgreement.measure(CpuLinearAttention.INSTANCE, s, groups, 3, l), 1e-5, 1e-12)).isTrue();
        assertThat(OalChecks.formsAgree(KernelAgreement.measure(new PairsCountedOnce(), s, groups, 3, l), 1e-5, 1e-12)).isFalse();
    }

    @Test
    void mutantMNotGramBreaksPositivity() {
        LayerSamples s = samples();
        int[] groups = TinyOal.groups(new Rng(6), 2, 16);
        double[][] l = new double[2][16];
        for (double[] head : l) {
            for (int a = 0; a < 4; a++) {
                head[a * 4 + a] = -0.5; // L + Lᵀ = −I: negative definite; L·Lᵀ = I/4
            }
        }
        assertThat(OalChecks.kernelPositive(OalChecks.minSimilarity(s, groups, 3, l, Mutant.NONE))).isTrue();
        assertThat(OalChecks.kernelPositive(OalChecks.minSimilarity(s, groups, 3, l, Mutant.M_NOT_GRAM))).isFalse();
    }

    @Test
    void mutantCalibrationGradientIgnoringNormalizerFailsGradientCheck() {
        LayerSamples s = samples();
        int[] groups = Arrays.copyOfRange(TinyOal.groups(new Rng(7), 2, 16), 0, 16);
        double[] l = QuadraticForm.taylorFactor(3);
        HeadObjective real = new HeadObjective(s, 0, groups, 3);
        HeadObjective broken = new HeadObjective(s, 0, groups, 3, Mutant.CALIBRATION_GRADIENT_IGNORES_NORMALIZER);
        assertThat(OalChecks.gradientMatches(real.gradientRelativeError(l, 1e-5), 1e-6)).isTrue();
        assertThat(OalChecks.gradientMatches(broken.gradientRelativeError(l, 1e-5), 1e-6)).isFalse();
    }

    @Test
    void mutantBlockBackwardIgnoringNormalizerFailsBlockGradientCheck() {
        LayerSamples s = TinyOal.samples(12, 1, 8, 2, 1, 8, 1.0);
        Rng rng = new Rng(8);
        int[] groups = TinyOal.groups(rng, 2, 8);
        double[][] l = TinyOal.factors(rng, 2, 3, 0.3);
        ConvertedAttention real = new ConvertedAttention(0, CpuLinearAttention.INSTANCE, groups, 3, l);
        ConvertedAttention broken = new ConvertedAttention(0, CpuLinearAttention.INSTANCE, groups, 3, l,
                Mutant.BLOCK_BACKWARD_IGNORES_NORMALIZER);
        double[] w = BlockGradientCheck.mseDirection(real, s);
        assertThat(OalChecks.gradientMatches(BlockGradientCheck.relativeError(real, s, w, 1, 1e-5), 1e-6)).isTrue();
        assertThat(OalChecks.gradientMatches(BlockGradientCheck.relativeError(broken, s, w, 1, 1e-5), 1e-6)).isFalse();
    }

    @Test
    void mutantTiesToHigherIndexBreaksTheGroupingRule() {
        double[] c = new double[32]; // every contribution equal: the rule picks dimensions 0.. for group 1
        assertThat(OalChecks.groupingFollowsRule(c, Grouping.assign(c, 1, 32), 1, 32)).isTrue();
        int[] broken = Grouping.assign(c, 1, 32, Mutant.GROUPING_TIES_TO_HIGHER_INDEX);
        assertThat(OalChecks.groupingFollowsRule(c, broken, 1, 32)).isFalse();
    }

    @Test
    void mutantCalibratingOnTestBlocksBreaksTestIsolation() {
        OalRun real = tinyRun(Mutant.NONE);
        OalRun leaky = tinyRun(Mutant.CALIBRATE_ON_TEST_BLOCKS);
        assertThat(OalChecks.testIsolated(real.roles(), real.ledger())).isTrue();
        assertThat(OalChecks.testIsolated(leaky.roles(), leaky.ledger())).isFalse();
        assertThat(OalChecks.testUsesOutsideEvaluation(leaky.ledger())).isPositive();
    }

    @Test
    void mutantFreshLoraForConvertedBreaksTheMatchedBudget() {
        OalRun real = tinyRun(Mutant.NONE);
        OalRun fresh = tinyRun(Mutant.FRESH_LORA_FOR_CONVERTED);
        assertThat(OalChecks.matchedBudget(real.softmaxLora(), real.oalLora(), OalProtocol.LORA_STEPS,
                OalProtocol.LORA_LEARNING_RATE, ADAPTATION_ROWS)).isTrue();
        assertThat(OalChecks.matchedBudget(fresh.softmaxLora(), fresh.oalLora(), OalProtocol.LORA_STEPS,
                OalProtocol.LORA_LEARNING_RATE, ADAPTATION_ROWS)).isFalse();
    }

    @Test
    void mutantClaimsOnSeedMeanHidesSeed44AndFailsNegativeResultCheck() throws IOException {
        Manifest manifest = ManifestLoader.forPaper("oal");
        Map<Long, Map<String, Object>> table = OalContracts.seedFileTable(manifest);
        assertThat(OalChecks.negativeResultsComplete(manifest, table, OalClaims.judge(manifest, table))).isTrue();
        OalClaims.Verdict broken = OalClaims.judge(manifest, table, Mutant.CLAIMS_ON_SEED_MEAN);
        assertThat(broken.claimsImprovement()).as("on the mean OAL wins both hypotheses").isTrue();
        assertThat(OalChecks.negativeResultsComplete(manifest, table, broken)).isFalse();
    }

    @Test
    void mutantUnwrittenElementFailsDenseDifferential() {
        OalChecks.DifferentialCase c = OalChecks.differentialCase(3, 1, 9, 2, 1, 16);
        assertThat(OalChecks.differential(CpuLinearAttention.INSTANCE, c, false, false).holds()).isTrue();
        assertThat(OalChecks.differential(CpuLinearAttention.INSTANCE, c, false, true).holds()).isTrue();
        assertThat(OalChecks.differential(new UnwrittenLastElement(), c, false, false).holds()).isFalse();
        assertThat(OalChecks.differential(new UnwrittenLastElement(), c, false, true).holds()).isFalse();
    }

    @Test
    void mutantPairsCountedOnceFailsRecurrentDifferential() {
        OalChecks.DifferentialCase c = OalChecks.differentialCase(4, 1, 9, 2, 1, 16);
        assertThat(OalChecks.differential(CpuLinearAttention.INSTANCE, c, true, true).holds()).isTrue();
        FlashRule.Verdict broken = OalChecks.differential(new PairsCountedOnce(), c, true, true);
        assertThat(broken.holds()).as("%s", broken).isFalse();
    }

    private static OalRun tinyRun(Mutant mutant) {
        return OalProtocol.run(42, CpuBackend.INSTANCE, TinyOal.model(3, 5), TinyOal.text(1, 32 * 30), TinyOal.text(2, 32 * 5),
                mutant);
    }
}
