package org.mechspec.pnmix;

import org.mechspec.compute.BitPacking;

/**
 * What the cache must hold after {@code tokens} appends, from the configuration alone (never from the
 * buffers): the token split and the byte figures. Key bytes = fp16 sink and residual keys (2 bytes per element)
 * + per quantized group the packed per-channel codes (⌈groupSize·b_c/8⌉ bytes per channel) and an fp16 scale and
 * zero per channel (4 bytes) + the stored mask. Value bytes = fp16 sink and residual values + per group the
 * packed per-token codes (⌈gc·valueBits/8⌉ bytes per token and value group) and 4 bytes of scale and zero per
 * token and value group. At the pinned protocol: 15108 + 17408 = 32516 bytes.
 */
public record ByteBudget(int sinkTokens, int quantizedTokens, int residualTokens, long keyBytes, long valueBytes) {

    public static ByteBudget of(PnMixConfig config, int tokens, int[] keyBits, int maskBytes) {
        int sink = Math.min(tokens, config.cache().sinkTokens());
        int later = tokens - sink;
        int quantized = later / config.cache().residualSize() * config.cache().residualSize();
        int residual = later - quantized;
        int groups = quantized / config.cache().groupSize();
        long fp16Row = 2L * config.model().kvChannels();
        long keyGroup = 4L * config.model().kvChannels();
        for (int b : keyBits) {
            keyGroup += BitPacking.streamBytes(config.cache().groupSize(), b);
        }
        int valueGroupsPerToken = config.model().kvChannels() / config.valueGroupChannels();
        long valueGroup = (long) config.cache().groupSize() * valueGroupsPerToken
                * (BitPacking.tokenGroupBytes(config.valueGroupChannels(), config.cache().valueBits()) + 4L);
        long key = (sink + residual) * fp16Row + groups * keyGroup + maskBytes;
        long value = (sink + residual) * fp16Row + groups * valueGroup;
        return new ByteBudget(sink, quantized, residual, key, value);
    }
}
