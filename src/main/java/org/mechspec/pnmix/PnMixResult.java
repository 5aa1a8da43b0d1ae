package org.mechspec.pnmix;

import org.mechspec.compute.PackedKvCache;

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
