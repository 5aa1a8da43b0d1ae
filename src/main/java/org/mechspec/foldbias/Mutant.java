package org.mechspec.foldbias;

/**
 * Deliberately broken variants of the mechanism, one per check, injected through the mechanism's own code path
 * so the mutant tests can show every check's predicate is able to report false. {@link #NONE} is the mechanism.
 */
public enum Mutant {
    NONE,
    /** The fold adds −β·uᵀ instead of +β·uᵀ (breaks the rank-one logit identity). */
    FLIP_FOLD_SIGN,
    /** The fold direction is the plain ridge fit, without the mean(A·u) = 1 constraint. */
    DROP_MEAN_CONSTRAINT,
    /** The KKT system's top-left block is 2AᵀA + λI instead of 2(AᵀA + λI). */
    KKT_RIDGE_NOT_DOUBLED,
    /** The value refit receives the unrounded folded keys K_f. */
    REFIT_ON_UNROUNDED_KEYS,
    /** The values are not refit after rounding: C_v' = C_v. */
    SKIP_VALUE_REFIT,
    /** The fold forgets the bias: K_f = C_k. */
    FOLD_DROPS_BIAS,
    /** Online use refits the values on the test queries after the cache was frozen. */
    FIT_AFTER_FREEZE,
    /** β from unconstrained least squares with negative weights clamped to zero, instead of NNLS. */
    NNLS_CLAMPED_LEAST_SQUARES,
    /** Zero-weight keys stay in the compact set (their β = ln 0 = −∞). */
    SKIP_PRUNING,
    /** The CPU fold fuses β_j·u_c + C_k into one rounding (Math.fma), unlike the twin the kernel must match. */
    FUSED_FOLD
}
