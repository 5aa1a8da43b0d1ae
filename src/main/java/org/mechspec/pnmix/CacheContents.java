package org.mechspec.pnmix;

import org.mechspec.compute.BitPacking;
import org.mechspec.compute.HalfFloat;

/**
 * What a packed cache holds, read back token-major [position][kvHead·headDim]: fp16 tokens decoded, groups
 * dequantized on the backend. Used for the metrics and the dequantized oracle, never by the attention path.
 */
final class CacheContents {
    private CacheContents() {
    }

    static double[] keys(PackedKvCache cache, PackedCacheOps ops) {
        return read(cache, ops, true);
    }

    static double[] values(PackedKvCache cache, PackedCacheOps ops) {
        return read(cache, ops, false);
    }

    private static double[] read(PackedKvCache cache, PackedCacheOps ops, boolean keys) {
        int c = cache.channels();
        double[] out = new double[cache.length() * c];
        decode(keys ? cache.sinkKeys() : cache.sinkValues(), out, 0);
        int g = cache.groupTokens();
        for (int i = 0; i < cache.groups().size(); i++) {
            PackedKvCache.Group gr = cache.groups().get(i);
            double[] x = keys
                    ? ops.dequantizePerChannel(gr.keys(), g, gr.keyBits())
                    : ops.dequantizePerToken(gr.values(), g, c, cache.valueGroupChannels(), cache.valueBits());
            System.arraycopy(x, 0, out, (cache.sinkTokens() + i * g) * c, x.length);
        }
        decode(keys ? cache.residualKeys() : cache.residualValues(), out, cache.residualStart() * c);
        return out;
    }

    private static void decode(byte[] halfs, double[] out, int at) {
        for (int i = 0; i < halfs.length / 2; i++) {
            out[at + i] = HalfFloat.fromHalfBits(BitPacking.getHalf(halfs, 2 * i));
        }
    }

    /** Token-major [L][kvHeads][d] → head-major [kvHeads][L][d], the layout of the backends' attention. */
    static double[] headMajor(double[] tokenMajor, int tokens, int kvHeads, int d) {
        double[] out = new double[tokenMajor.length];
        for (int t = 0; t < tokens; t++) {
            for (int h = 0; h < kvHeads; h++) {
                System.arraycopy(tokenMajor, (t * kvHeads + h) * d, out, (h * tokens + t) * d, d);
            }
        }
        return out;
    }
}
