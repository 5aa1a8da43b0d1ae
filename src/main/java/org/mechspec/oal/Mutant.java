package org.mechspec.oal;

/**
 * Deliberately broken variants of the OAL mechanism, one or more per contract, so each contract's mutant test can
 * show its check reports false. Injected through package-private overloads; production code passes {@link #NONE}.
 */
enum Mutant {
    NONE,
    /** M = L + Lᵀ instead of L·Lᵀ: the quadratic form is no longer positive semi-definite. */
    M_NOT_GRAM,
    /** The calibration gradient forgets that the normalizer depends on the coefficients. */
    CALIBRATION_GRADIENT_IGNORES_NORMALIZER,
    /** The converted block's backward forgets that the normalizer depends on q and k. */
    BLOCK_BACKWARD_IGNORES_NORMALIZER,
    /** Grouping breaks ties in the contribution ranking towards the higher dimension index. */
    GROUPING_TIES_TO_HIGHER_INDEX,
    /** Calibration fits the coefficients on the test blocks: the test split leaks into selection. */
    CALIBRATE_ON_TEST_BLOCKS,
    /** The converted model gets its own LoRA A matrices and dropout masks instead of the softmax model's. */
    FRESH_LORA_FOR_CONVERTED,
    /** Hypotheses are judged on the mean over seeds instead of seed by seed. */
    CLAIMS_ON_SEED_MEAN
}
