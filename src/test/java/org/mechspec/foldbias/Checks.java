package org.mechspec.foldbias;

/**
 * The checks of contracts/fold-bias.json as plain predicates, shared by the contract tests and the mutant tests.
 * Thresholds come from the manifest.
 */
public final class Checks {
    private Checks() {
    }

    /** rank_one_logit_identity_reference: A·K_fᵀ = A·C_kᵀ + (A·u)·βᵀ to within the threshold. */
    public static boolean rankOneLogitIdentity(FoldBiasMetrics m, double threshold) {
        return m.logitIdentityError() <= threshold;
    }

    /** context_projection_mean_constraint: |mean(A·u) − 1| within the threshold. */
    public static boolean contextProjectionMean(FoldBiasMetrics m, double threshold) {
        return m.projectionMeanError() <= threshold;
    }

    /** ridge_constrained_kkt_reference: the KKT solve equals the Cholesky closed form to within the threshold. */
    public static boolean kktMatchesReference(FoldBiasMetrics m, double threshold) {
        return m.kktReferenceError() <= threshold;
    }

    /** keys_really_rounded_before_value_refit: every key the refit saw is fp16, and rounding changed some key. */
    public static boolean keysReallyRounded(FoldBiasMetrics m) {
        return m.refitKeysOffFp16Grid() == 0 && m.refitKeysChangedByRounding() > 0;
    }

    /** rounded_value_fit_normal_equations: max |X_hᵀ(X_h·C_v' − Y)| within the threshold. */
    public static boolean valueNormalEquations(FoldBiasMetrics m, double threshold) {
        return m.valueNormalEquationError() <= threshold;
    }

    /** same_value_output_error_bound: bound − error ≥ −threshold for every test query. */
    public static boolean outputErrorBounded(FoldBiasMetrics m, double threshold) {
        return m.minimumOutputBoundSlack() >= -threshold;
    }

    /** dropping_bias_changes_attention: dropping β costs at least factor × the folded path's mean error. */
    public static boolean droppingBiasMatters(FoldBiasMetrics m, double factor) {
        return m.dropBiasOutputError() >= factor * m.foldedOutputError();
    }

    /** offline_fit_is_frozen: no fit after freezing, and the cache's bytes hash the same after online use. */
    public static boolean offlineFitFrozen(FoldBiasMetrics m) {
        return m.modelCalls() == 0 && m.cacheSha256AtFreeze().equals(m.cacheSha256AfterOnline());
    }

    /** nnls_kkt_conditions: w ≥ 0, gradient ≥ 0 where w = 0 and ≈ 0 where w > 0 (relative violation ≤ threshold). */
    public static boolean nnlsKkt(FoldBiasMetrics m, double threshold) {
        return m.negativeWeights() == 0 && m.nnlsKktViolation() <= threshold;
    }

    /** fold_kernel_matches_cpu_twin: the kernel's output equals the CPU twin's bit for bit, every element written. */
    public static boolean bitIdentical(double[] out, double[] twin) {
        if (out.length != twin.length) {
            return false;
        }
        for (int i = 0; i < out.length; i++) {
            if (Double.doubleToRawLongBits(out[i]) != Double.doubleToRawLongBits(twin[i])) {
                return false;
            }
        }
        return true;
    }
}
