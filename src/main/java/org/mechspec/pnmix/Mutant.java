package org.mechspec.pnmix;

/**
 * Deliberately broken variants of the mechanism, one flag each, used only by the mutant tests to show that
 * every check can report false. {@link #NONE} is the mechanism as specified.
 */
public enum Mutant {
    NONE,
    /** Byte accounting adds the saliency mask's bytes to the key total twice. */
    COUNT_BYTE_TWICE,
    /** Sink tokens are not kept in fp16: they stream into the residual and get quantized like the rest. */
    QUANTIZE_SINKS,
    /** Saliency is recomputed (over all tokens seen so far) at every decode step and the mask replaced. */
    RECOMPUTE_SALIENCY_DURING_DECODE,
    /** RoPE, saliency and key bit widths pair channels (p, p + d/2) while the config asks for adjacent pairs. */
    HALF_SPLIT_WHERE_ADJACENT,
    /** 1-bit groups keep min and max as their levels instead of the conditional means. */
    MIN_MAX_ONE_BIT,
    /** The final batched call lets every decode query see the whole cache. */
    FINAL_CALL_NOT_CAUSAL,
    /** One attention call per query head instead of one per step. */
    PER_HEAD_ATTENTION_CALLS,
    /** The least salient pairs get the high bit width. */
    INVERT_SALIENCY,
    /** The layer is drawn from a stream salted with the clock, not from the seed alone. */
    UNSEEDED_INIT
}
