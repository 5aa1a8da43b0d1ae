package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The manifest's thresholds are inclusive ("error <= threshold", "slack >= -threshold", "drop >= factor x folded"):
 * a figure exactly at the threshold passes and the next double beyond it (Math.nextUp / nextDown) fails.
 */
@Tag("fold-bias")
class CheckThresholdsTest {
    /** Metrics with every field settable; the defaults pass every check. */
    private static final class Figures {
        double logitIdentity;
        double projectionMean;
        double kktReference;
        double valueNormalEquations;
        double droppedBias = 1.0;
        double minimumSlack;
        double nnlsKkt;
        double foldedError;
        long offGrid;
        long changedByRounding = 1;
        long negativeWeights;

        FoldBiasMetrics metrics() {
            return new FoldBiasMetrics(logitIdentity, projectionMean, kktReference, valueNormalEquations, 0.0,
                    droppedBias, minimumSlack, 0, 1, nnlsKkt, foldedError, offGrid, changedByRounding,
                    negativeWeights, "sha", "sha");
        }
    }

    private static double threshold(String check) {
        return FoldBiasContracts.threshold(check);
    }

    @Test
    void logitIdentityAtItsThresholdPasses() {
        double t = threshold("rank_one_logit_identity_reference");
        Figures f = new Figures();
        f.logitIdentity = t;
        assertThat(Checks.rankOneLogitIdentity(f.metrics(), t)).isTrue();
        f.logitIdentity = Math.nextUp(t);
        assertThat(Checks.rankOneLogitIdentity(f.metrics(), t)).isFalse();
    }

    @Test
    void projectionMeanAtItsThresholdPasses() {
        double t = threshold("context_projection_mean_constraint");
        Figures f = new Figures();
        f.projectionMean = t;
        assertThat(Checks.contextProjectionMean(f.metrics(), t)).isTrue();
        f.projectionMean = Math.nextUp(t);
        assertThat(Checks.contextProjectionMean(f.metrics(), t)).isFalse();
    }

    @Test
    void kktReferenceAtItsThresholdPasses() {
        double t = threshold("ridge_constrained_kkt_reference");
        Figures f = new Figures();
        f.kktReference = t;
        assertThat(Checks.kktMatchesReference(f.metrics(), t)).isTrue();
        f.kktReference = Math.nextUp(t);
        assertThat(Checks.kktMatchesReference(f.metrics(), t)).isFalse();
    }

    @Test
    void valueNormalEquationsAtTheirThresholdPass() {
        double t = threshold("rounded_value_fit_normal_equations");
        Figures f = new Figures();
        f.valueNormalEquations = t;
        assertThat(Checks.valueNormalEquations(f.metrics(), t)).isTrue();
        f.valueNormalEquations = Math.nextUp(t);
        assertThat(Checks.valueNormalEquations(f.metrics(), t)).isFalse();
    }

    @Test
    void boundSlackAtMinusItsThresholdPasses() {
        double t = threshold("same_value_output_error_bound");
        Figures f = new Figures();
        f.minimumSlack = -t;
        assertThat(Checks.outputErrorBounded(f.metrics(), t)).isTrue();
        f.minimumSlack = Math.nextDown(-t);
        assertThat(Checks.outputErrorBounded(f.metrics(), t)).isFalse();
    }

    /** folded = 0.25: factor × folded is exactly 2.5 for the manifest's factor 10. */
    @Test
    void droppingBiasExactlyFactorTimesWorsePasses() {
        double factor = threshold("dropping_bias_changes_attention");
        Figures f = new Figures();
        f.foldedError = 0.25;
        f.droppedBias = factor * 0.25;
        assertThat(Checks.droppingBiasMatters(f.metrics(), factor)).isTrue();
        f.droppedBias = Math.nextDown(factor * 0.25);
        assertThat(Checks.droppingBiasMatters(f.metrics(), factor)).isFalse();
    }

    @Test
    void nnlsKktViolationAtItsThresholdPasses() {
        double t = threshold("nnls_kkt_conditions");
        Figures f = new Figures();
        f.nnlsKkt = t;
        assertThat(Checks.nnlsKkt(f.metrics(), t)).isTrue();
        f.nnlsKkt = Math.nextUp(t);
        assertThat(Checks.nnlsKkt(f.metrics(), t)).isFalse();
        f.nnlsKkt = 0.0;
        f.negativeWeights = 1;
        assertThat(Checks.nnlsKkt(f.metrics(), t)).isFalse();
    }

    /** "Rounding changed K_f somewhere": one changed element suffices, none fails; one off-grid element fails. */
    @Test
    void keysReallyRoundedNeedsOneChangeAndNoOffGridKey() {
        Figures f = new Figures();
        assertThat(Checks.keysReallyRounded(f.metrics())).isTrue();
        f.changedByRounding = 0;
        assertThat(Checks.keysReallyRounded(f.metrics())).isFalse();
        f.changedByRounding = 1;
        f.offGrid = 1;
        assertThat(Checks.keysReallyRounded(f.metrics())).isFalse();
    }

    /** Arrays of different lengths are never bit-identical, whichever is the shorter. */
    @Test
    void bitIdenticalNeedsEqualLengths() {
        assertThat(Checks.bitIdentical(new double[] {1.0}, new double[] {1.0, 2.0})).isFalse();
        assertThat(Checks.bitIdentical(new double[] {1.0, 2.0}, new double[] {1.0})).isFalse();
        assertThat(Checks.bitIdentical(new double[] {1.0, 2.0}, new double[] {1.0, 2.0})).isTrue();
    }
}
