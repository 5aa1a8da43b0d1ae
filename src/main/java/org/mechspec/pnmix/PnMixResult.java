package org.mechspec.pnmix;


/**
 * Everything one protocol run measured. Figures are those the seed file names; the rest feeds the contracts.
 *
 * @param finalCache the cache after the last decode token (for the structural checks)
 * @param keyBitsAtStart the key widths chosen before the first append
 * @param maskAfterPrefill the stored mask bytes right after saliency
 * @param maskUnchangedAfterDecode the stored mask equalled {@code maskAfterPrefill} at every decode step and at the end
 * @param packedVsOracleMaxError max |packed-cache attention − backend attention over the dequantized cache| over the online calls (NaN when not measured)
 * @param unchangedWindowMaxDelta online vs final delta over the decode queries whose visible tokens were stored alike at both calls
 * @param changedWindowMaxDelta the same over the decode queries that saw tokens later requantized (0 when none)
 */
public record PnMixResult(
        PnMixConfig config,
        int tokens,
        double keyMse,
        double valueMse,
        double attentionKl,
        double attentionOutputMse,
        double attentionOutputCosine,
        double sinkKeyMaxError,
        int saliencyComputations,
        boolean maskUnchangedAfterDecode,
        int attentionCalls,
        double onlineVsFinalMaxDelta,
        double unchangedWindowMaxDelta,
        double changedWindowMaxDelta,
        int unchangedWindowQueries,
        int changedWindowQueries,
        long keyBytes,
        long valueBytes,
        long heldBytes,
        long quantizedKeyBytes,
        int quantizedTokens,
        int sinkTokens,
        int residualTokens,
        PairMask mask,
        byte[] maskAfterPrefill,
        int[] keyBitsAtStart,
        PackedKvCache finalCache,
        double packedVsOracleMaxError,
        double elapsedSeconds,
        long peakAllocatedBytes) {

    /** Every figure of the run by name (the seed file's names where it has them), for bit-for-bit comparison. */
    public java.util.Map<String, Object> metrics() {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>();
        m.put("key_mse", keyMse);
        m.put("value_mse", valueMse);
        m.put("attention_kl", attentionKl);
        m.put("attention_output_mse", attentionOutputMse);
        m.put("attention_output_cosine", attentionOutputCosine);
        m.put("sink_key_max_error", sinkKeyMaxError);
        m.put("saliency_computations", (long) saliencyComputations);
        m.put("mask_unchanged_after_decode", maskUnchangedAfterDecode);
        m.put("actual_attention_calls", (long) attentionCalls);
        m.put("online_vs_final_cache_attention_max_delta", onlineVsFinalMaxDelta);
        m.put("online_vs_final_unchanged_window_max_delta", unchangedWindowMaxDelta);
        m.put("online_vs_final_changed_window_max_delta", changedWindowMaxDelta);
        m.put("key_bytes", keyBytes);
        m.put("value_bytes", valueBytes);
        m.put("persistent_cache_bytes", persistentCacheBytes());
        m.put("quantized_tokens", (long) quantizedTokens);
        m.put("sink_tokens", (long) sinkTokens);
        m.put("residual_tokens", (long) residualTokens);
        m.put("key_bits_per_element_including_sink_residual", keyBitsPerElement());
        m.put("temporary_dequantized_cache_included", temporaryDequantizedCacheIncluded());
        m.put("saliency_mask", mask == null ? -1L : mask.asLong());
        m.put("packed_vs_dequantized_attention_max_error", packedVsOracleMaxError);
        return m;
    }

    public long persistentCacheBytes() {
        return keyBytes + valueBytes;
    }

    /** Key bits per stored key element, sink and residual tokens and the mask included. */
    public double keyBitsPerElement() {
        return 8.0 * keyBytes / ((double) tokens * config.kvChannels());
    }

    /** True when the byte figures count more than the buffers the cache holds (a temporary copy, say). */
    public boolean temporaryDequantizedCacheIncluded() {
        return keyBytes + valueBytes > heldBytes;
    }
}
