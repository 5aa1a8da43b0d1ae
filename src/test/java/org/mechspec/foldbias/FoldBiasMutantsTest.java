package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.Rng;
import org.mechspec.spec.Breaks;

/**
 * Every check can fail: the mechanism with one part broken ({@link BrokenParts}), run on the protocol (seed 42, CPU),
 * makes the check's predicate report false at the manifest threshold, while the unbroken mechanism passes it.
 */
@Tag("fold-bias")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FoldBiasMutantsTest {
    private static final long SEED = 42;
    /** One run per broken mechanism, held by this class's instance, so every launch computes its own. */
    private final Map<String, FoldBiasMetrics> runs = new HashMap<>();

    private FoldBiasInputs inputs() {
        return FoldBiasInputs.draw(FoldBiasConfig.PROTOCOL, SEED);
    }

    private synchronized FoldBiasMetrics metrics(String name, Supplier<FoldBiasRun> run) {
        return runs.computeIfAbsent(name, k -> FoldBiasMetrics.of(run.get()));
    }

    private FoldBiasMetrics unbroken() {
        return metrics("unbroken", () -> new FoldBias(CpuBackend.INSTANCE).run(inputs()));
    }

    private FoldBiasMetrics broken(String name, FoldBias mechanism) {
        return metrics(name, () -> mechanism.run(inputs()));
    }

    private static double threshold(String check) {
        return FoldBiasContracts.threshold(check);
    }

    @Test
    @Breaks(paper = "fold-bias", check = "rank_one_logit_identity_reference")
    void flippedFoldSignBreaksTheLogitIdentity() {
        double t = threshold("rank_one_logit_identity_reference");
        assertThat(Checks.rankOneLogitIdentity(unbroken(), t)).isTrue();
        assertThat(Checks.rankOneLogitIdentity(broken("flipped fold sign", BrokenParts.with(BrokenParts.FLIPPED_FOLD_SIGN)), t)).isFalse();
    }

    @Test
    @Breaks(paper = "fold-bias", check = "context_projection_mean_constraint")
    void droppedMeanConstraintBreaksTheProjectionMean() {
        double t = threshold("context_projection_mean_constraint");
        assertThat(Checks.contextProjectionMean(unbroken(), t)).isTrue();
        assertThat(Checks.contextProjectionMean(broken("ridge fit", BrokenParts.with(BrokenParts.RIDGE_WITHOUT_MEAN_CONSTRAINT)), t)).isFalse();
    }

    @Test
    @Breaks(paper = "fold-bias", check = "ridge_constrained_kkt_reference")
    void undoubledRidgeBreaksTheKktReference() {
        double t = threshold("ridge_constrained_kkt_reference");
        assertThat(Checks.kktMatchesReference(unbroken(), t)).isTrue();
        assertThat(Checks.kktMatchesReference(broken("ridge not doubled", BrokenParts.with(BrokenParts.KKT_RIDGE_NOT_DOUBLED)), t)).isFalse();
    }

    @Test
    @Breaks(paper = "fold-bias", check = "keys_really_rounded_before_value_refit")
    void refitOnUnroundedKeysIsCaught() {
        assertThat(Checks.keysReallyRounded(unbroken())).isTrue();
        FoldBiasMetrics m = broken("no fp16 rounding", new FoldBias(BrokenParts.NO_FP16_ROUNDING));
        assertThat(m.refitKeysOffFp16Grid()).isPositive();
        assertThat(Checks.keysReallyRounded(m)).isFalse();
    }

    @Test
    @Breaks(paper = "fold-bias", check = "rounded_value_fit_normal_equations")
    void skippedValueRefitBreaksTheNormalEquations() {
        double t = threshold("rounded_value_fit_normal_equations");
        assertThat(Checks.valueNormalEquations(unbroken(), t)).isTrue();
        assertThat(Checks.valueNormalEquations(broken("no value refit", BrokenParts.with(BrokenParts.staleLeastSquares())), t)).isFalse();
    }

    @Test
    @Breaks(paper = "fold-bias", check = "same_value_output_error_bound")
    void pinskerWithoutSquareRootIsNotABound() {
        double t = threshold("same_value_output_error_bound");
        assertThat(Checks.outputErrorBounded(unbroken(), t)).isTrue();
        // Broken through the TV-bound seam: T = min(tanh(osc/4), KL/2), Pinsker without its square root.
        TvBound noSqrt = (p, delta) -> Math.min(OutputBound.tanhTerm(delta), OutputBound.kl(p, delta) / 2);
        FoldBiasMetrics broken = FoldBiasMetrics.of(new FoldBias(CpuBackend.INSTANCE, KeySelector.TOP_BY_MAX_WEIGHT, noSqrt)
                .run(inputs()));
        assertThat(Checks.outputErrorBounded(broken, t)).isFalse();
    }

    @Test
    @Breaks(paper = "fold-bias", check = "dropping_bias_changes_attention")
    void foldWithoutBiasIsNoBetterThanDroppingIt() {
        double t = threshold("dropping_bias_changes_attention");
        assertThat(Checks.droppingBiasMatters(unbroken(), t)).isTrue();
        assertThat(Checks.droppingBiasMatters(broken("fold drops bias", BrokenParts.with(BrokenParts.FOLD_DROPS_BIAS)), t)).isFalse();
    }

    @Test
    @Breaks(paper = "fold-bias", check = "offline_fit_is_frozen")
    void fitAfterFreezingIsCaught() {
        assertThat(Checks.offlineFitFrozen(unbroken())).isTrue();
        FoldBiasMetrics m = metrics("fit after freeze", () -> BrokenParts.refitAfterFreeze(
                new FoldBias(CpuBackend.INSTANCE).run(inputs()), inputs()));
        assertThat(m.modelCalls()).isEqualTo(1);
        assertThat(m.cacheSha256AfterOnline()).isNotEqualTo(m.cacheSha256AtFreeze());
        assertThat(Checks.offlineFitFrozen(m)).isFalse();
    }

    @Test
    @Breaks(paper = "fold-bias", check = "nnls_kkt_conditions")
    void clampedLeastSquaresViolatesTheNnlsKktConditions() {
        double t = threshold("nnls_kkt_conditions");
        assertThat(Checks.nnlsKkt(unbroken(), t)).isTrue();
        assertThat(Checks.nnlsKkt(broken("clamped least squares", BrokenParts.with(BrokenParts.CLAMPED_LEAST_SQUARES_FOR_NNLS)), t)).isFalse();
    }

    /** The kernel contract demands bit equality; a fused multiply-add twin differs in the last bit somewhere. */
    @Test
    @Breaks(paper = "fold-bias", check = "fold_kernel_matches_cpu_twin")
    void fusedFoldIsNotBitIdenticalToTheTwin() {
        Rng rng = new Rng(SEED);
        int t = 64;
        int d = 64;
        double[] ck = rng.normals(t * d, 0.0, 1.0);
        double[] beta = rng.normals(t, 0.0, 3.0);
        double[] u = rng.normals(d, 0.0, 1.0);
        double[] twin = new CpuRankOneFold().fold(ck, beta, u, t, d);
        assertThat(Checks.bitIdentical(twin, new CpuRankOneFold().fold(ck, beta, u, t, d))).isTrue();
        assertThat(Checks.bitIdentical(BrokenParts.FUSED_FOLD.fold(ck, beta, u, t, d), twin)).isFalse();
    }

    /**
     * Without pruning, a zero-weight key's β = ln 0 = −∞ would reach the attention; the attention rejects it with a
     * named cause, never a NaN metric (the protocol's NNLS does leave keys at zero weight).
     */
    @Test
    void unprunedZeroWeightKeysAreRejectedNotMeasured() {
        FoldBiasInputs in = inputs();
        FoldBiasConfig c = in.config();
        Compaction comp = new FoldBias(CpuBackend.INSTANCE).run(in).compaction();
        assertThat(comp.size()).isLessThan(c.t());
        double[] unprunedBeta = new double[c.t()];
        for (int j = 0; j < c.t(); j++) {
            unprunedBeta[j] = StrictMath.log(comp.weights()[j]);
        }
        double[] unprunedKeys = Dense.rows(in.keys(), c.d(), comp.selected());
        assertThatThrownBy(() -> AttentionOps.weights(CpuBackend.INSTANCE, in.referenceQueries(), c.referenceQueries(),
                unprunedKeys, c.t(), c.d(), unprunedBeta))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bias[")
                .hasMessageContaining("-Infinity");
    }
}
