package org.mechspec.pnmix;

/**
 * Everything one protocol run measured, by what it is about: the quality of the packed cache's attention, the
 * saliency mask, the attention calls, and storage. Figures are those the seed file names; the rest feeds the
 * contracts.
 *
 * @param finalCache the cache after the last decode token (for the structural checks)
 */
public record PnMixResult(PnMixConfig config, int tokens, Quality quality, Saliency saliency, Calls calls,
                          Storage storage, PackedKvCache finalCache, double elapsedSeconds) {

    /**
     * The packed cache against the fp16 truth.
     *
     * @param packedVsOracleMaxError max |packed-cache attention − backend attention over the dequantized cache| over
     *                               the online calls (NaN when not measured)
     */
    public record Quality(double keyMse, double valueMse, double attentionKl, double attentionOutputMse,
                          double attentionOutputCosine, double sinkKeyMaxError, double packedVsOracleMaxError) {
    }

    /**
     * @param keyBitsAtStart the key widths chosen before the first append
     * @param maskAfterPrefill the stored mask bytes right after saliency
     * @param maskUnchangedAfterDecode the stored mask equalled {@code maskAfterPrefill} at every decode step and at the end
     */
    public record Saliency(int saliencyComputations, boolean maskUnchangedAfterDecode, PairMask mask,
                           byte[] maskAfterPrefill, int[] keyBitsAtStart) {
    }

    /**
     * @param unchangedWindowMaxDelta online vs final delta over the decode queries whose visible tokens were stored
     *                                alike at both calls
     * @param changedWindowMaxDelta the same over the decode queries that saw tokens later requantized (0 when none)
     */
    public record Calls(int attentionCalls, double onlineVsFinalMaxDelta, double unchangedWindowMaxDelta,
                        double changedWindowMaxDelta, int unchangedWindowQueries, int changedWindowQueries) {
    }

    /** Bytes and tokens as the cache holds them at the end, and the peak over the run. */
    public record Storage(long keyBytes, long valueBytes, long heldBytes, long quantizedKeyBytes, int quantizedTokens,
                          int sinkTokens, int residualTokens, long peakAllocatedBytes) {
    }

    /** Every figure of the run by name (the seed file's names where it has them), for bit-for-bit comparison. */
    public java.util.Map<String, Object> metrics() {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("key_mse", quality.keyMse());
        m.put("value_mse", quality.valueMse());
        m.put("attention_kl", quality.attentionKl());
        m.put("attention_output_mse", quality.attentionOutputMse());
        m.put("attention_output_cosine", quality.attentionOutputCosine());
        m.put("sink_key_max_error", quality.sinkKeyMaxError());
        m.put("saliency_computations", (long) saliency.saliencyComputations());
        m.put("mask_unchanged_after_decode", saliency.maskUnchangedAfterDecode());
        m.put("actual_attention_calls", (long) calls.attentionCalls());
        m.put("online_vs_final_cache_attention_max_delta", calls.onlineVsFinalMaxDelta());
        m.put("online_vs_final_unchanged_window_max_delta", calls.unchangedWindowMaxDelta());
        m.put("online_vs_final_changed_window_max_delta", calls.changedWindowMaxDelta());
        m.put("key_bytes", storage.keyBytes());
        m.put("value_bytes", storage.valueBytes());
        m.put("persistent_cache_bytes", persistentCacheBytes());
        m.put("quantized_tokens", (long) storage.quantizedTokens());
        m.put("sink_tokens", (long) storage.sinkTokens());
        m.put("residual_tokens", (long) storage.residualTokens());
        m.put("key_bits_per_element_including_sink_residual", keyBitsPerElement());
        m.put("temporary_dequantized_cache_included", temporaryDequantizedCacheIncluded());
        m.put("saliency_mask", saliency.mask() == null ? -1L : saliency.mask().asLong());
        m.put("packed_vs_dequantized_attention_max_error", quality.packedVsOracleMaxError());
        return m;
    }

    public long persistentCacheBytes() {
        return storage.keyBytes() + storage.valueBytes();
    }

    /** Key bits per stored key element, sink and residual tokens and the mask included. */
    public double keyBitsPerElement() {
        return 8.0 * storage.keyBytes() / ((double) tokens * config.model().kvChannels());
    }

    /** True when the byte figures count more than the buffers the cache holds (a temporary copy, say). */
    public boolean temporaryDequantizedCacheIncluded() {
        return storage.keyBytes() + storage.valueBytes() > storage.heldBytes();
    }
}
