package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.Rng;

/**
 * Every check can fail: a named mutant of the mechanism, run on the protocol (seed 42, CPU), makes the check's
 * predicate report false at the manifest threshold, while the unmutated mechanism passes it.
 */
@Tag("fold-bias")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FoldBiasMutantsTest {
    private static final long SEED = 42;
    /** One run per mutant, held by this class's instance, so every launch computes its own. */
    private final Map<Mutant, FoldBiasMetrics> runs = new EnumMap<>(Mutant.class);

    private synchronized FoldBiasMetrics metrics(Mutant mutant) {
        return runs.computeIfAbsent(mutant, m -> FoldBiasMetrics.of(
                new FoldBias(CpuBackend.INSTANCE, m).run(FoldBiasInputs.draw(FoldBiasConfig.PROTOCOL, SEED))));
    }

    private static double threshold(String check) {
        return FoldBiasContracts.threshold(check);
    }

    @Test
    void flippedFoldSignBreaksTheLogitIdentity() {
        double t = threshold("rank_one_logit_identity_reference");
        assertThat(Checks.rankOneLogitIdentity(metrics(Mutant.NONE), t)).isTrue();
        assertThat(Checks.rankOneLogitIdentity(metrics(Mutant.FLIP_FOLD_SIGN), t)).isFalse();
    }

    @Test
    void droppedMeanConstraintBreaksTheProjectionMean() {
        double t = threshold("context_projection_mean_constraint");
        assertThat(Checks.contextProjectionMean(metrics(Mutant.NONE), t)).isTrue();
        assertThat(Checks.contextProjectionMean(metrics(Mutant.DROP_MEAN_CONSTRAINT), t)).isFalse();
    }

    @Test
    void undoubledRidgeBreaksTheKktReference() {
        double t = threshold("ridge_constrained_kkt_reference");
        assertThat(Checks.kktMatchesReference(metrics(Mutant.NONE), t)).isTrue();
        assertThat(Checks.kktMatchesReference(metrics(Mutant.KKT_RIDGE_NOT_DOUBLED), t)).isFalse();
    }

    @Test
    void refitOnUnroundedKeysIsCaught() {
        assertThat(Checks.keysReallyRounded(metrics(Mutant.NONE))).isTrue();
        FoldBiasMetrics m = metrics(Mutant.REFIT_ON_UNROUNDED_KEYS);
        assertThat(m.refitKeysOffFp16Grid()).isPositive();
        assertThat(Checks.keysReallyRounded(m)).isFalse();
    }

    @Test
    void skippedValueRefitBreaksTheNormalEquations() {
        double t = threshold("rounded_value_fit_normal_equations");
        assertThat(Checks.valueNormalEquations(metrics(Mutant.NONE), t)).isTrue();
        assertThat(Checks.valueNormalEquations(metrics(Mutant.SKIP_VALUE_REFIT), t)).isFalse();
    }

    @Test
    void pinskerWithoutSquareRootIsNotABound() {
        double t = threshold("same_value_output_error_bound");
        assertThat(Checks.outputErrorBounded(metrics(Mutant.NONE), t)).isTrue();
        // Broken through the TV-bound seam: T = min(tanh(osc/4), KL/2), Pinsker without its square root.
        TvBound noSqrt = (p, delta) -> Math.min(OutputBound.tanhTerm(delta), OutputBound.kl(p, delta) / 2);
        FoldBiasMetrics broken = FoldBiasMetrics.of(new FoldBias(CpuBackend.INSTANCE, KeySelector.TOP_BY_MAX_WEIGHT, noSqrt)
                .run(FoldBiasInputs.draw(FoldBiasConfig.PROTOCOL, SEED)));
        assertThat(Checks.outputErrorBounded(broken, t)).isFalse();
    }

    @Test
    void foldWithoutBiasIsNoBetterThanDroppingIt() {
        double t = threshold("dropping_bias_changes_attention");
        assertThat(Checks.droppingBiasMatters(metrics(Mutant.NONE), t)).isTrue();
        assertThat(Checks.droppingBiasMatters(metrics(Mutant.FOLD_DROPS_BIAS), t)).isFalse();
    }

    @Test
    void fitAfterFreezingIsCaught() {
        assertThat(Checks.offlineFitFrozen(metrics(Mutant.NONE))).isTrue();
        FoldBiasMetrics m = metrics(Mutant.FIT_AFTER_FREEZE);
        assertThat(m.modelCalls()).isEqualTo(1);
        assertThat(m.cacheSha256AfterOnline()).isNotEqualTo(m.cacheSha256AtFreeze());
        assertThat(Checks.offlineFitFrozen(m)).isFalse();
    }

    @Test
    void clampedLeastSquaresViolatesTheNnlsKktConditions() {
        double t = threshold("nnls_kkt_conditions");
        assertThat(Checks.nnlsKkt(metrics(Mutant.NONE), t)).isTrue();
        assertThat(Checks.nnlsKkt(metrics(Mutant.NNLS_CLAMPED_LEAST_SQUARES), t)).isFalse();
    }

    /** The kernel contract demands bit equality; a fused multiply-add twin differs in the last bit somewhere. */
    @Test
    void fusedFoldIsNotBitIdenticalToTheTwin() {
        Rng rng = new Rng(SEED);
        int t = 64;
        int d = 64;
        double[] ck = rng.normals(t * d, 0.0, 1.0);
        double[] beta = rng.normals(t, 0.0, 3.0);
        double[] u = rng.normals(d, 0.0, 1.0);
        double[] twin = new CpuRankOneFold(false).fold(ck, beta, u, t, d);
        assertThat(Checks.bitIdentical(twin, new CpuRankOneFold(false).fold(ck, beta, u, t, d))).isTrue();
        assertThat(Checks.bitIdentical(new CpuRankOneFold(true).fold(ck, beta, u, t, d), twin)).isFalse();
    }

    /** Without pruning, a zero-weight key's β = ln 0 = −∞ is rejected with a named cause, never a NaN metric. */
    @Test
    void skippedPruningIsRejectedNotMeasured() {
        assertThat(metrics(Mutant.NONE).compactKeysKept()).isLessThan(FoldBiasConfig.PROTOCOL.t());
        assertThatThrownBy(() -> metrics(Mutant.SKIP_PRUNING))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bias[")
                .hasMessageContaining("-Infinity");
    }
}
