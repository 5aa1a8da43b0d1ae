/**
 * Fold-bias: Attention-Matching compaction whose per-key bias β is folded into the keys, so the compacted cache runs
 * on a standard (bias-free) attention kernel.
 *
 * <p>Read in this order: {@code contracts/fold-bias.json} (the checks, thresholds, metrics and the artifact's
 * template) → {@link org.mechspec.foldbias.FoldBias#run} (the mechanism end to end over
 * {@link org.mechspec.foldbias.FoldBiasInputs#draw}; its parts — key selection, {@link org.mechspec.foldbias.Solvers},
 * {@link org.mechspec.foldbias.RankOneFold} and its {@code foldbias.cu} kernel — are the seams the mutant tests
 * break) → {@code FoldBiasContracts} in {@code src/test} (one seeded and one property half per check) →
 * {@code reports/fold-bias.<backend>.json}.
 */
package org.mechspec.foldbias;
