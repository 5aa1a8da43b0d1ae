package org.mechspec.pnmix;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.OneBitLevels;

/**
 * The streaming mixed-precision KV cache. The first {@code sinkTokens} tokens stay fp16; later tokens wait in an
 * fp16 residual until {@code residualSize} are present, then are quantized on the backend as groups of
 * {@code groupSize}: keys per channel (bit width per channel from the pair mask), values per token. Every
 * buffer is a real byte array sized to what it holds, and the byte figures are the sums of their lengths.
 */
public final class StreamingCache {
    private final PnMixConfig config;
    private final PackedCacheOps ops;
    private final int sinkCapacity;
    private final int rowBytes;
    private final OneBitLevels oneBit;
    private final int[] keyBits;
    private final byte[] mask;
    private byte[] sinkKeys = new byte[0];
    private byte[] sinkValues = new byte[0];
    private int sinkCount;
    private final List<PackedKvCache.Group> groups = new ArrayList<>();
    private byte[] residualKeys = new byte[0];
    private byte[] residualValues = new byte[0];
    private int residualCount;
    private long peakBytes;
    /** Bytes of the quantized groups so far, kept as they are added: summing them per append made appends O(n). */
    private long groupBytes;

    /**
     * @param keyBits bit width of each key channel (kvHead·headDim + dim)
     * @param mask the stored form of whatever chose those widths (the 4-byte pair mask; empty for uniform keys)
     */
    public StreamingCache(PnMixConfig config, PackedCacheOps ops, int[] keyBits, byte[] mask) {
        if (keyBits.length != config.model().kvChannels()) {
            throw new IllegalArgumentException("key bit widths: " + keyBits.length + " given, " + config.model().kvChannels()
                    + " channels");
        }
        for (int b : keyBits) {
            BitPacking.requireBits("key channel", b);
        }
        this.config = config;
        this.ops = ops;
        this.sinkCapacity = config.cache().sinkTokens();
        this.rowBytes = 2 * config.model().kvChannels();
        this.oneBit = config.cache().oneBitLevels();
        this.keyBits = keyBits.clone();
        this.mask = mask.clone();
        track(0);
    }

    /** Appends one token: k and v are its fp16 rows [kvHead][headDim]. */
    public void append(double[] k, double[] v) {
        requireHalfRow("k", k);
        requireHalfRow("v", v);
        if (sinkCount < sinkCapacity) {
            sinkKeys = appendRow(sinkKeys, k);
            sinkValues = appendRow(sinkValues, v);
            sinkCount++;
            track(0);
            return;
        }
        residualKeys = appendRow(residualKeys, k);
        residualValues = appendRow(residualValues, v);
        residualCount++;
        track(0);
        if (residualCount == config.cache().residualSize()) {
            flush();
        }
    }

    private void flush() {
        int g = config.cache().groupSize();
        int c = config.model().kvChannels();
        for (int start = 0; start < residualCount; start += g) {
            double[] keys = decodeRows(residualKeys, start, g);
            double[] values = decodeRows(residualValues, start, g);
            PackedBlock kb = ops.quantizePerChannel(keys, g, keyBits, oneBit);
            PackedBlock vb = ops.quantizePerToken(values, g, c, config.valueGroupChannels(), config.cache().valueBits(), oneBit);
            groups.add(new PackedKvCache.Group(kb, keyBits.clone(), vb));
            groupBytes += kb.bytes() + vb.bytes();
            track(16L * g * c); // the two fp64 staging arrays live while the group is quantized
        }
        residualKeys = new byte[0];
        residualValues = new byte[0];
        residualCount = 0;
    }

    /** The cache as the attention kernels read it (references to the live buffers, no copy). */
    public PackedKvCache view() {
        return new PackedKvCache(config.model().kvHeads(), config.model().headDim(), sinkCount, sinkKeys, sinkValues, config.cache().groupSize(),
                groups, config.cache().valueBits(), config.valueGroupChannels(), residualCount, residualKeys, residualValues);
    }

    public int length() {
        return sinkCount + groups.size() * config.cache().groupSize() + residualCount;
    }

    public int sinkTokens() {
        return sinkCount;
    }

    public int quantizedTokens() {
        return groups.size() * config.cache().groupSize();
    }

    public int residualTokens() {
        return residualCount;
    }

    /** Key buffers: fp16 sink and residual keys, packed codes + fp16 scale/zero of every group, the mask. */
    public long keyBytes() {
        long n = sinkKeys.length + residualKeys.length + mask.length;
        for (PackedKvCache.Group gr : groups) {
            n += gr.keys().codes().length + gr.keys().meta().length;
        }
        return n;
    }

    /** Value buffers: fp16 sink and residual values, packed codes + fp16 scale/zero of every group. */
    public long valueBytes() {
        long n = sinkValues.length + residualValues.length;
        for (PackedKvCache.Group gr : groups) {
            n += gr.values().codes().length + gr.values().meta().length;
        }
        return n;
    }

    /** Quantized key bytes only: codes plus scale/zero, no fp16 tokens, no mask. */
    public long quantizedKeyBytes() {
        long n = 0;
        for (PackedKvCache.Group gr : groups) {
            n += gr.keys().codes().length + gr.keys().meta().length;
        }
        return n;
    }

    /** Every byte array the cache holds, by length: what the key and value figures must add up to. */
    public long heldBytes() {
        return (long) sinkKeys.length + sinkValues.length + residualKeys.length + residualValues.length + groupBytes + mask.length;
    }

    public long peakBytes() {
        return peakBytes;
    }

    public byte[] maskBytes() {
        return mask.clone();
    }

    public int[] keyBits() {
        return keyBits.clone();
    }

    private void track(long transientBytes) {
        peakBytes = Math.max(peakBytes, heldBytes() + transientBytes);
    }

    private byte[] appendRow(byte[] buf, double[] row) {
        byte[] out = Arrays.copyOf(buf, buf.length + rowBytes);
        for (int i = 0; i < row.length; i++) {
            BitPacking.putHalf(out, buf.length + 2 * i, HalfFloat.toHalfBits(row[i]));
        }
        return out;
    }

    private double[] decodeRows(byte[] buf, int fromToken, int tokens) {
        int c = config.model().kvChannels();
        double[] out = new double[tokens * c];
        for (int i = 0; i < out.length; i++) {
            out[i] = HalfFloat.fromHalfBits(BitPacking.getHalf(buf, fromToken * rowBytes + 2 * i));
        }
        return out;
    }

    private void requireHalfRow(String name, double[] row) {
        if (row.length != config.model().kvChannels()) {
            throw new IllegalArgumentException(name + " row has " + row.length + " values, the cache holds " + config.model().kvChannels());
        }
        for (int i = 0; i < row.length; i++) {
            if (!Double.isFinite(row[i]) || !HalfFloat.isHalfRepresentable(row[i])) {
                throw new IllegalArgumentException(name + "[" + i + "] = " + row[i] + " is not a finite fp16 value");
            }
        }
    }
}
