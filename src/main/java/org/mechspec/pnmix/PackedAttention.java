package org.mechspec.pnmix;


/**
 * Result of attention over a packed cache: {@code out} [queryHeads][queryLen][headDim] and, when asked for,
 * {@code logits} [queryHeads][queryLen][keyLen] (scaled scores q·k̂/√d; keys a query may not see hold −∞).
 */
public record PackedAttention(double[] out, double[] logits) {
}
