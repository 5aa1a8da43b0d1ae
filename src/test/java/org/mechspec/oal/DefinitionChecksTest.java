package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;
import org.mechspec.spec.FlashRule;

/** The definition checks' thresholds, relative errors and tolerances on stated cases. */
@Tag("oal")
class DefinitionChecksTest {
    private static final double U = FlashRule.FP64_UNIT_ROUNDOFF;

    @Test
    void layerErrorHoldsUpToABoundRatioOfExactlyOne() {
        assertThat(new DefinitionChecks.LayerError(0.1, 1.0).holds()).isTrue();
        assertThat(new DefinitionChecks.LayerError(0.1, Math.nextUp(1.0)).holds()).isFalse();
    }

    @Test
    void lowersLossOnlyStrictlyBelowOne() {
        assertThat(DefinitionChecks.lowersLoss(1.0)).isFalse();
        assertThat(DefinitionChecks.lowersLoss(Math.nextDown(1.0))).isTrue();
    }

    @Test
    void roundingAgreementHoldsAtRatioOneInEveryForm() {
        assertThat(new RoundingAgreement(1, 1, 1, 1).holds()).isTrue();
        double up = Math.nextUp(1.0);
        assertThat(new RoundingAgreement(up, 1, 1, 1).holds()).isFalse();
        assertThat(new RoundingAgreement(1, up, 1, 1).holds()).isFalse();
        assertThat(new RoundingAgreement(1, 1, up, 1).holds()).isFalse();
        assertThat(new RoundingAgreement(1, 1, 1, up).holds()).isFalse();
    }

    /** |out − oracle| / (form bound + oracle bound): max(|1.5−1|/(0.1+0.15), |2−3|/(1+1)) = 2; a NaN element wins. */
    @Test
    void roundingRatioIsTheWorstElementAndNaNPropagates() {
        double r = RoundingAgreement.ratio(new double[] {1.5, 2}, new double[] {1, 3}, new double[] {0.1, 1},
                new double[] {0.15, 1});
        assertThat(r).isCloseTo(2.0, within(1e-12));
        assertThat(RoundingAgreement.ratio(new double[] {Double.NaN, 2}, new double[] {1, 3}, new double[] {1, 1},
                new double[] {1, 1})).isNaN();
    }

    /** max(|5−4|/4, 0 where both are 0, |2−2|/2) = 0.25; a length mismatch is infinite; NaN propagates. */
    @Test
    void contributionRelativeErrorOnAStatedCase() {
        assertThat(DefinitionChecks.contributionRelativeError(new double[] {5, 0, 2}, new double[] {4, 0, 2})).isEqualTo(0.25);
        assertThat(DefinitionChecks.contributionRelativeError(new double[] {0, 0}, new double[] {0, 0})).isEqualTo(0.0);
        assertThat(DefinitionChecks.contributionRelativeError(new double[] {1}, new double[] {1, 2})).isInfinite();
        assertThat(DefinitionChecks.contributionRelativeError(new double[] {Double.NaN}, new double[] {1})).isNaN();
    }

    /** (4n + 6)·u for n = 10 tokens: 46·2⁻⁵³. */
    @Test
    void contributionToleranceIsFourNPlusSixUnitRoundoffs() {
        assertThat(DefinitionChecks.contributionTolerance(10)).isEqualTo(46 * 0x1.0p-53);
    }

    @Test
    void minStepChangeIsTheSmallestRecordedChange() {
        LoraRecord r = new LoraRecord(TinyOal.model(1, 1), null);
        assertThat(DefinitionChecks.minStepChange(r)).isEqualTo(0.0);
        r.stepChanges.add(0.5);
        r.stepChanges.add(0.25);
        r.stepChanges.add(0.75);
        assertThat(DefinitionChecks.minStepChange(r)).isEqualTo(0.25);
    }

    // ------------------------------------------------------------ head loss tolerance, head 1 of 2, d = 4

    private static final int[] HEAD_GROUPS = {1, 2, 0, 0};

    /**
     * The documented formula for head 1, the same operations in the same order (so equal to the last bit):
     * (1/n)·Σ (2|diff|·2e + (2e)²) + 2γ_n·Σ diff²/n, n = blocks·T·d, oracle and e from the factor on every head.
     */
    @Test
    void headLossToleranceIsTheDocumentedFormulaForTheChosenHead() {
        LayerSamples s = TinyOal.samples(5, 2, 3, 2, 1, 4, 0.8);
        double[] l = TinyOal.factors(new Rng(9), 1, 3, 0.3)[0];
        int[] groups = {1, 2, 0, 0, 1, 2, 0, 0};
        double[][] factors = {l, l};
        var shape = s.shape(3);
        double[] oracle = PairwiseOracle.attention(shape, s.q(), s.k(), s.v(), groups, factors);
        double[] e = PairwiseOracle.errorBound(shape, s.q(), s.k(), s.v(), groups, factors, U);
        double n = 2 * 3 * 4;
        double gamma = n * U / (1 - n * U);
        double sum = 0;
        double loss = 0;
        for (int b = 0; b < 2; b++) {
            for (int t = 0; t < 3; t++) {
                for (int c = 0; c < 4; c++) {
                    int i = ((b * 3 + t) * 2 + 1) * 4 + c;
                    double diff = Math.abs(oracle[i] - s.softmax()[i]);
                    double err = 2 * e[i];
                    sum += 2 * diff * err + err * err;
                    loss += diff * diff;
                }
            }
        }
        assertThat(DefinitionChecks.headLossTolerance(s, 1, HEAD_GROUPS, l)).isEqualTo(sum / n + 2 * gamma * loss / n);
    }

    /** The worst ratio is head 1's (a fit that made things worse), computed with head 1's own groups. */
    @Test
    void worstGroupedLossRatioReadsEachHeadsOwnGroups() {
        LayerSamples s = TinyOal.samples(6, 1, 4, 2, 1, 4, 0.8);
        double[] taylor = QuadraticForm.taylorFactor(3);
        double[][] noisy = TinyOal.factors(new Rng(3), 2, 3, 1.0);
        int[] head0 = {1, 2, 0, 0};
        int[] head1 = {0, 0, 2, 1};
        int[] groups = {1, 2, 0, 0, 0, 0, 2, 1};
        Calibration.HeadFit fit0 = new Calibration.HeadFit(taylor, 0, null, null, new double[][] {noisy[0]}, new double[][] {taylor});
        Calibration.HeadFit fit1 = new Calibration.HeadFit(taylor, 0, null, null, new double[][] {taylor}, new double[][] {noisy[1]});
        double r0 = DefinitionChecks.headLoss(s, 0, head0, taylor) / DefinitionChecks.headLoss(s, 0, head0, noisy[0]);
        double r1 = DefinitionChecks.headLoss(s, 1, head1, noisy[1]) / DefinitionChecks.headLoss(s, 1, head1, taylor);
        assertThat(r1).isGreaterThan(r0);
        assertThat(DefinitionChecks.worstGroupedLossRatio(s, groups, new Calibration.HeadFit[] {fit0, fit1})).isEqualTo(r1);
    }

    // ------------------------------------------------------------ block gradient check

    /** Changing the softmax target by t changes the MSE direction by exactly −t (w = out − target). */
    @Test
    void mseDirectionSubtractsTheTarget() {
        LayerSamples s = TinyOal.samples(4, 1, 3, 2, 1, 8, 1.0);
        LayerSamples zero = new LayerSamples(1, 3, 2, 1, 8, s.q(), s.k(), s.v(), new double[s.q().length]);
        Rng rng = new Rng(4);
        ConvertedAttention block = new ConvertedAttention(0, CpuGroupedQuadraticAttention.INSTANCE, TinyOal.groups(rng, 2, 8),
                Grouping.GROUPS, TinyOal.factors(rng, 2, Grouping.GROUPS, 0.3));
        double[] w = BlockGradientCheck.mseDirection(block, s);
        double[] w0 = BlockGradientCheck.mseDirection(block, zero);
        for (int i = 0; i < w.length; i++) {
            assertThat(w[i] - w0[i]).isCloseTo(-s.softmax()[i], within(1e-12));
        }
    }

    /** A relative error: scaling the loss weights by 1e4 leaves it small (≤ 1e-6), and within a factor 10. */
    @Test
    void blockGradientErrorIsRelativeToTheGradientsScale() {
        LayerSamples s = TinyOal.samples(8, 1, 3, 2, 1, 8, 1.0);
        Rng rng = new Rng(8);
        ConvertedAttention block = new ConvertedAttention(0, CpuGroupedQuadraticAttention.INSTANCE, TinyOal.groups(rng, 2, 8),
                Grouping.GROUPS, TinyOal.factors(rng, 2, Grouping.GROUPS, 0.3));
        double[] w = rng.normals(s.q().length, 0, 1);
        double[] big = new double[w.length];
        for (int i = 0; i < w.length; i++) {
            big[i] = 1e4 * w[i];
        }
        double small = BlockGradientCheck.relativeError(block, s, w, 3, 1e-5);
        double scaled = BlockGradientCheck.relativeError(block, s, big, 3, 1e-5);
        assertThat(scaled).isLessThanOrEqualTo(1e-6);
        assertThat(scaled).isBetween(small / 10, small * 10);
    }
}
