/**
 * pn-mix: a mixed-precision packed KV cache over RoPE key pairs — pair saliency picks the pairs whose keys get 3
 * bits (the rest 1), values get 2 bits per token group, sink and residual tokens stay fp16 — read directly by the
 * attention kernels.
 *
 * <p>Read in this order: {@code contracts/pn-mix.json} → {@link org.mechspec.pnmix.PnMixExperiment#run} (the layer
 * from the seed, the mechanism's {@link org.mechspec.pnmix.PnMixProtocol} run and its baselines), with the cache in
 * {@link org.mechspec.pnmix.StreamingCache} and its kernels behind {@link org.mechspec.pnmix.PackedCacheOps} (CPU
 * twin and {@code pnmix.cu}) → {@code PnMixContracts} and {@code PnMixDefinitionContracts} in {@code src/test} →
 * {@code reports/pn-mix.<backend>.json}.
 */
package org.mechspec.pnmix;
