package org.mechspec.pnmix;

import org.mechspec.compute.BitPacking;
import org.mechspec.compute.HalfFloat;

/**
 * Reads one token's key or value row for one KV head straight out of a {@link PackedKvCache}: fp16 bytes for
 * sink and residual tokens, unpack + zero + code·scale for quantized ones. The CPU twin of the inner loop of
 * {@code pnmix.cu}'s attention kernels; it never materializes a dequantized cache.
 */
final class PackedCacheReader {
    private static final double[] HALF = halfTable();

    private final PackedKvCache cache;
    private final int channels;
    private final int valueGroups;
    private final int valueGroupBytes;
    private final int[][] keyOffsets;
    private final double[][] keyScale;
    private final double[][] keyZero;

    PackedCacheReader(PackedKvCache cache) {
        this.cache = cache;
        this.channels = cache.channels();
        int groups = cache.groups().size();
        this.valueGroups = groups == 0 ? 0 : BitPacking.groupsPerToken(channels, cache.valueGroupChannels());
        this.valueGroupBytes = groups == 0 ? 0 : BitPacking.tokenGroupBytes(cache.valueGroupChannels(), cache.valueBits());
        keyOffsets = new int[groups][];
        keyScale = new double[groups][channels];
        keyZero = new double[groups][channels];
        for (int g = 0; g < groups; g++) {
            PackedKvCache.Group gr = cache.groups().get(g);
            keyOffsets[g] = BitPacking.channelOffsets(cache.groupTokens(), gr.keyBits());
            for (int c = 0; c < channels; c++) {
                keyScale[g][c] = half(gr.keys().meta(), 4 * c);
                keyZero[g][c] = half(gr.keys().meta(), 4 * c + 2);
            }
        }
    }

    /** The fp64 value of the fp16 bits at {@code offset} (little-endian). */
    static double half(byte[] b, int offset) {
        return HALF[(b[offset] & 0xFF) | ((b[offset + 1] & 0xFF) << 8)];
    }

    /**
     * Key row of position {@code j}, KV head {@code kvh}, into {@code out[0..headDim)}; {@code fp32}: a quantized
     * element is zero + code·scale evaluated in float (fp16 values are exact in either precision).
     */
    void key(int j, int kvh, double[] out, boolean fp32) {
        int d = cache.headDim();
        int g = quantizedGroup(j);
        if (g < 0) {
            fp16Row(j, kvh, true, out);
            return;
        }
        int t = j - cache.sinkTokens() - g * cache.groupTokens();
        PackedKvCache.Group gr = cache.groups().get(g);
        byte[] codes = gr.keys().codes();
        for (int c = 0; c < d; c++) {
            int ch = kvh * d + c;
            int code = BitPacking.get(codes, keyOffsets[g][ch], t, gr.keyBits()[ch]);
            out[c] = fp32 ? (float) keyZero[g][ch] + code * (float) keyScale[g][ch] : keyZero[g][ch] + code * keyScale[g][ch];
        }
    }

    /** Value row of position {@code j}, KV head {@code kvh}, like {@link #key}. */
    void value(int j, int kvh, double[] out, boolean fp32) {
        int d = cache.headDim();
        int g = quantizedGroup(j);
        if (g < 0) {
            fp16Row(j, kvh, false, out);
            return;
        }
        int t = j - cache.sinkTokens() - g * cache.groupTokens();
        PackedBlock block = cache.groups().get(g).values();
        int gc = cache.valueGroupChannels();
        for (int c = 0; c < d; c++) {
            int ch = kvh * d + c;
            int vg = t * valueGroups + ch / gc;
            int code = BitPacking.get(block.codes(), vg * valueGroupBytes, ch % gc, cache.valueBits());
            double zero = half(block.meta(), 4 * vg + 2);
            double scale = half(block.meta(), 4 * vg);
            out[c] = fp32 ? (float) zero + code * (float) scale : zero + code * scale;
        }
    }

    /** The group holding position j, or −1 for a sink or residual token. */
    private int quantizedGroup(int j) {
        if (j < 0 || j >= cache.length()) {
            throw new IndexOutOfBoundsException("position " + j + " outside a cache of " + cache.length() + " tokens");
        }
        if (j < cache.sinkTokens() || j >= cache.residualStart()) {
            return -1;
        }
        return (j - cache.sinkTokens()) / cache.groupTokens();
    }

    private void fp16Row(int j, int kvh, boolean keys, double[] out) {
        byte[] buf;
        int t;
        if (j < cache.sinkTokens()) {
            buf = keys ? cache.sinkKeys() : cache.sinkValues();
            t = j;
        } else {
            buf = keys ? cache.residualKeys() : cache.residualValues();
            t = j - cache.residualStart();
        }
        int d = cache.headDim();
        int base = (t * channels + kvh * d) * 2;
        for (int c = 0; c < d; c++) {
            out[c] = half(buf, base + 2 * c);
        }
    }

    private static double[] halfTable() {
        double[] t = new double[1 << 16];
        for (int i = 0; i < t.length; i++) {
            t[i] = HalfFloat.fromHalfBits((short) i);
        }
        return t;
    }
}
