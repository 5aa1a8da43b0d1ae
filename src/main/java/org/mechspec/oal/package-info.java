/**
 * OAL: outlier-aware attention linearization — one layer of a small Qwen2 model converted to grouped quadratic
 * attention (dimensions grouped by their contribution, a PSD quadratic form per head), calibrated against the
 * softmax layer, then both models adapted with the same LoRA budget and compared on held-out text.
 *
 * <p>Read in this order: {@code contracts/oal.json} → {@link org.mechspec.oal.OalProtocol#run} (grouping,
 * calibration, matched LoRA, evaluation, every block use in a {@link org.mechspec.oal.BlockLedger}), with the
 * converted layer in {@link org.mechspec.oal.ConvertedAttention} and its kernels behind
 * {@link org.mechspec.oal.GroupedQuadraticAttentionOps} (CPU twin and {@code oal.cu}) → {@code OalContracts} in
 * {@code src/test} → {@code reports/oal.<backend>.json}, whose negative-result sentences come from the seeds.
 */
package org.mechspec.oal;
