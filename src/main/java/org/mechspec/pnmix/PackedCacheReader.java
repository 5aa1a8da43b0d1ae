package org.mechspec.pnmix;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.HalfFloat;

/**
 * Reads blocks of key or value rows for one KV head straight out of a {@link PackedKvCache}: fp16 bytes for
 * sink and residual tokens, unpack + zero + code·scale for quantized ones. The CPU twin of the inner loop of
 * {@code pnmix.cu}'s attention kernels; it never materializes a dequantized cache, only one block at a time.
 * A block is one quantized group, or up to {@link #FP16_BLOCK} tokens of the sink or the residual.
 */
final class PackedCacheReader {
    static final int FP16_BLOCK = 128;
    private static final double[] HALF = halfTable();
    private static final float[] HALF32 = halfTable32();
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final PackedKvCache cache;
    private final int channels;
    private final int valueGroups;
    private final int valueGroupBytes;
    // The 2^bits dequantized levels of the quantization group being read (fp32 reads: levels32).
    private final double[] levels = new double[1 << 8];
    private final float[] levels32 = new float[1 << 8];

    PackedCacheReader(PackedKvCache cache) {
        cache.requireMechspecLayout();
        this.cache = cache;
        this.channels = cache.channels();
        boolean quantized = !cache.groups().isEmpty();
        this.valueGroups = quantized ? BitPacking.groupsPerToken(channels, cache.valueGroupChannels()) : 0;
        this.valueGroupBytes = quantized ? BitPacking.tokenGroupBytes(cache.valueGroupChannels(), cache.valueBits()) : 0;
    }

    /** The fp64 value of the fp16 bits at {@code offset} (little-endian). */
    static double half(byte[] b, int offset) {
        return HALF[(b[offset] & 0xFF) | ((b[offset + 1] & 0xFF) << 8)];
    }

    /**
     * {@link #half} without the table: scales and zeros are spread over the whole fp16 range, so their lookups
     * would miss the cache. A finite fp16 value is a float, so building the float's bits gives the same double.
     */
    static double metaHalf(byte[] b, int offset) {
        int h = (b[offset] & 0xFF) | ((b[offset + 1] & 0xFF) << 8);
        int e = (h >>> 10) & 0x1F;
        if (e == 0 || e == 0x1F) {
            return HALF[h]; // subnormal, zero, inf, NaN
        }
        return Float.intBitsToFloat((h & 0x8000) << 16 | (e + 112) << 23 | (h & 0x3FF) << 13);
    }

    /** The most tokens a block holds. */
    int maxBlockTokens() {
        return cache.groups().isEmpty() ? FP16_BLOCK : Math.max(FP16_BLOCK, cache.groupTokens());
    }

    /** End (exclusive) of the block that starts at position {@code j}. */
    int blockEnd(int j) {
        checkPosition(j);
        if (j < cache.sinkTokens()) {
            return Math.min(cache.sinkTokens(), j + FP16_BLOCK);
        }
        if (j >= cache.residualStart()) {
            return Math.min(cache.length(), j + FP16_BLOCK);
        }
        int g = (j - cache.sinkTokens()) / cache.groupTokens();
        return cache.sinkTokens() + (g + 1) * cache.groupTokens();
    }

    /** Key row of position {@code j}, KV head {@code kvh}, into {@code out[0..headDim)}. */
    void key(int j, int kvh, double[] out) {
        keys(j, j + 1, kvh, out);
    }

    /** Value row of position {@code j}, KV head {@code kvh}, into {@code out[0..headDim)}. */
    void value(int j, int kvh, double[] out) {
        values(j, j + 1, kvh, out);
    }

    /**
     * Key rows of positions [from, to) (inside one block), KV head {@code kvh}, into
     * {@code out[(j − from)·headDim + c]}, a quantized element as zero + code·scale in fp64.
     */
    void keys(int from, int to, int kvh, double[] out) {
        int g = blockGroup(from, to);
        if (g < 0) {
            fp16Rows(from, to, kvh, true, out);
            return;
        }
        int d = cache.headDim();
        int t = from - cache.sinkTokens() - g * cache.groupTokens();
        PackedKvCache.Group gr = cache.groups().get(g);
        int[] bits = gr.keyBits();
        byte[] codes = gr.keys().codes();
        byte[] meta = gr.keys().meta();
        int offset = streamOffset(bits, kvh * d);
        for (int c = 0; c < d; c++) {
            int ch = kvh * d + c;
            fillLevels(meta, ch, bits[ch]);
            decode(codes, offset, t, to - from, bits[ch], out, c, d);
            offset += BitPacking.streamBytes(cache.groupTokens(), bits[ch]);
        }
    }

    /**
     * Key rows of positions [from, to) (inside one block), KV head {@code kvh}, as the fp32 attention reads them:
     * by channel, {@code out[c][j − from]}, so its loop over a block's tokens runs over whole arrays at one index.
     * A quantized element is zero + code·scale evaluated in float (fp16 values are exact in either precision).
     */
    void keys(int from, int to, int kvh, float[][] out) {
        int g = blockGroup(from, to);
        int d = cache.headDim();
        if (g < 0) {
            byte[] buf = fp16Bytes(from, true);
            int t0 = fp16Index(from);
            for (int t = t0; t < t0 + (to - from); t++) {
                int base = (t * channels + kvh * d) * 2;
                for (int c = 0; c < d; c++) {
                    out[c][t - t0] = half32(buf, base + 2 * c);
                }
            }
            return;
        }
        int t = from - cache.sinkTokens() - g * cache.groupTokens();
        PackedKvCache.Group gr = cache.groups().get(g);
        int[] bits = gr.keyBits();
        int offset = streamOffset(bits, kvh * d);
        for (int c = 0; c < d; c++) {
            int ch = kvh * d + c;
            fillLevels32(gr.keys().meta(), ch, bits[ch]);
            decode(gr.keys().codes(), offset, t, to - from, bits[ch], out[c], 0);
            offset += BitPacking.streamBytes(cache.groupTokens(), bits[ch]);
        }
    }

    /** Value rows of positions [from, to), KV head {@code kvh}, in fp32: {@code out[j − from][c]}. */
    void values(int from, int to, int kvh, float[][] out) {
        int g = blockGroup(from, to);
        int d = cache.headDim();
        if (g < 0) {
            byte[] buf = fp16Bytes(from, false);
            int t0 = fp16Index(from);
            for (int t = t0; t < t0 + (to - from); t++) {
                int base = (t * channels + kvh * d) * 2;
                float[] row = out[t - t0];
                for (int c = 0; c < d; c++) {
                    row[c] = half32(buf, base + 2 * c);
                }
            }
            return;
        }
        int gc = cache.valueGroupChannels();
        int bits = cache.valueBits();
        PackedBlock block = cache.groups().get(g).values();
        int t0 = from - cache.sinkTokens() - g * cache.groupTokens();
        for (int t = t0; t < t0 + (to - from); t++) {
            for (int c = 0; c < d; ) {
                int ch = kvh * d + c;
                int vg = t * valueGroups + ch / gc;
                int index = ch % gc;
                int n = Math.min(d - c, gc - index);
                fillLevels32(block.meta(), vg, bits);
                decode(block.codes(), vg * valueGroupBytes, index, n, bits, out[t - t0], c);
                c += n;
            }
        }
    }

    /** Value rows of positions [from, to), KV head {@code kvh}, like {@link #keys}. */
    void values(int from, int to, int kvh, double[] out) {
        int g = blockGroup(from, to);
        if (g < 0) {
            fp16Rows(from, to, kvh, false, out);
            return;
        }
        int d = cache.headDim();
        int gc = cache.valueGroupChannels();
        int bits = cache.valueBits();
        PackedBlock block = cache.groups().get(g).values();
        int t0 = from - cache.sinkTokens() - g * cache.groupTokens();
        for (int t = t0; t < t0 + (to - from); t++) {
            int rowBase = (t - t0) * d;
            // A head's channels may span several value groups, or share one with other heads.
            for (int c = 0; c < d; ) {
                int ch = kvh * d + c;
                int vg = t * valueGroups + ch / gc;
                int index = ch % gc;
                int n = Math.min(d - c, gc - index);
                fillLevels(block.meta(), vg, bits);
                decode(block.codes(), vg * valueGroupBytes, index, n, bits, out, rowBase + c, 1);
                c += n;
            }
        }
    }

    /** The levels zero + k·scale of quantization group {@code group}, in fp64. */
    private void fillLevels(byte[] meta, int group, int bits) {
        double scale = metaHalf(meta, 4 * group);
        double zero = metaHalf(meta, 4 * group + 2);
        for (int k = 0; k < 1 << bits; k++) {
            levels[k] = zero + k * scale;
        }
    }

    /** Byte offset of channel {@code channel}'s stream in a group's per-channel key codes. */
    private int streamOffset(int[] bits, int channel) {
        int offset = 0;
        for (int ch = 0; ch < channel; ch++) {
            offset += BitPacking.streamBytes(cache.groupTokens(), bits[ch]);
        }
        return offset;
    }

    /** {@link #fillLevels} in fp32, into {@code levels32}. */
    private void fillLevels32(byte[] meta, int group, int bits) {
        float scale = (float) metaHalf(meta, 4 * group);
        float zero = (float) metaHalf(meta, 4 * group + 2);
        for (int k = 0; k < 1 << bits; k++) {
            levels32[k] = zero + k * scale;
        }
    }

    /**
     * Codes {@code index .. index + count} of the {@code bits}-bit stream at {@code offset} (layout in
     * {@link BitPacking}), as levels, into {@code out[outFrom + i·outStride]}. Reads each byte once.
     */
    private void decode(byte[] codes, int offset, int index, int count, int bits, double[] out, int outFrom,
                        int outStride) {
        int mask = (1 << bits) - 1;
        int i = 0;
        // Eight codes fill exactly `bits` bytes: from a multiple of 8 on, take them a whole chunk at a time.
        if ((index & 7) == 0) {
            int p = offset + (index >>> 3) * bits;
            for (; i + 8 <= count; i += 8, p += bits) {
                long word = chunk(codes, p, bits);
                int o = outFrom + i * outStride;
                for (int k = 0; k < 8; k++, o += outStride) {
                    out[o] = levels[(int) (word >>> (k * bits)) & mask];
                }
            }
        }
        for (; i < count; i++) {
            out[outFrom + i * outStride] = levels[BitPacking.get(codes, offset, index + i, bits)];
        }
    }

    /** {@link #decode} into floats, contiguous: {@code out[outFrom + i]}. */
    private void decode(byte[] codes, int offset, int index, int count, int bits, float[] out, int outFrom) {
        int mask = (1 << bits) - 1;
        int i = 0;
        if ((index & 7) == 0) {
            int p = offset + (index >>> 3) * bits;
            for (; i + 8 <= count; i += 8, p += bits) {
                long word = chunk(codes, p, bits);
                for (int k = 0; k < 8; k++) {
                    out[outFrom + i + k] = levels32[(int) (word >>> (k * bits)) & mask];
                }
            }
        }
        for (; i < count; i++) {
            out[outFrom + i] = levels32[BitPacking.get(codes, offset, index + i, bits)];
        }
    }

    /**
     * The eight codes in the {@code bits} bytes at {@code p}, little-endian. One 8-byte read where the array
     * holds 8 bytes from p (the bits above 8·bits are the next codes', never read), else byte by byte.
     */
    private static long chunk(byte[] codes, int p, int bits) {
        if (p + 8 <= codes.length) {
            return (long) LONGS.get(codes, p);
        }
        long word = 0;
        for (int k = 0; k < bits; k++) {
            word |= (long) (codes[p + k] & 0xFF) << (8 * k);
        }
        return word;
    }

    /** The group holding positions [from, to), or −1 for sink or residual tokens; the range must be one block's. */
    private int blockGroup(int from, int to) {
        if (to <= from || to > blockEnd(from)) {
            throw new IndexOutOfBoundsException("positions [" + from + ", " + to + ") are not inside one block");
        }
        if (from < cache.sinkTokens() || from >= cache.residualStart()) {
            return -1;
        }
        return (from - cache.sinkTokens()) / cache.groupTokens();
    }

    private void checkPosition(int j) {
        if (j < 0 || j >= cache.length()) {
            throw new IndexOutOfBoundsException("position " + j + " outside a cache of " + cache.length() + " tokens");
        }
    }

    /** The fp16 buffer (sink or residual) holding position {@code from}. */
    private byte[] fp16Bytes(int from, boolean keys) {
        if (from < cache.sinkTokens()) {
            return keys ? cache.sinkKeys() : cache.sinkValues();
        }
        return keys ? cache.residualKeys() : cache.residualValues();
    }

    /** Token index of position {@code from} in its fp16 buffer. */
    private int fp16Index(int from) {
        return from < cache.sinkTokens() ? from : from - cache.residualStart();
    }

    private void fp16Rows(int from, int to, int kvh, boolean keys, double[] out) {
        byte[] buf = fp16Bytes(from, keys);
        int t0 = fp16Index(from);
        int d = cache.headDim();
        for (int t = t0; t < t0 + (to - from); t++) {
            int base = (t * channels + kvh * d) * 2;
            int rowBase = (t - t0) * d;
            for (int c = 0; c < d; c++) {
                out[rowBase + c] = half(buf, base + 2 * c);
            }
        }
    }

    private static float[] halfTable32() {
        float[] t = new float[1 << 16];
        for (int i = 0; i < t.length; i++) {
            t[i] = (float) HalfFloat.fromHalfBits((short) i);
        }
        return t;
    }

    /** The float value of the fp16 bits at {@code offset} (little-endian). */
    static float half32(byte[] b, int offset) {
        return HALF32[(b[offset] & 0xFF) | ((b[offset + 1] & 0xFF) << 8)];
    }

    private static double[] halfTable() {
        double[] t = new double[1 << 16];
        for (int i = 0; i < t.length; i++) {
            t[i] = HalfFloat.fromHalfBits((short) i);
        }
        return t;
    }
}
