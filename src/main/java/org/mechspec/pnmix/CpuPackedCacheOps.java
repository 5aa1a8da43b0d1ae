package org.mechspec.pnmix;

import org.mechspec.compute.BitPacking;
import org.mechspec.compute.Finite;
import org.mechspec.compute.GroupQuantizer;
import org.mechspec.compute.OneBitLevels;

/**
 * The CPU definition of {@link PackedCacheOps}: fixed loop orders and StrictMath, so the same inputs give the
 * same bits on any machine. Attention follows {@link org.mechspec.compute.CpuBackend#attention}'s arithmetic order exactly, so over
 * the same dequantized values the two agree bit for bit.
 */
public final class CpuPackedCacheOps implements PackedCacheOps {
    private long peakWorkingBytes;

    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public long peakWorkingBytes() {
        return peakWorkingBytes;
    }

    private void working(long bytes) {
        peakWorkingBytes = Math.max(peakWorkingBytes, bytes);
    }

    @Override
    public byte[] packPerChannel(int[] codes, int tokens, int[] bits) {
        int channels = bits.length;
        int[] off = channelLayout(tokens, bits);
        PackedCacheOps.checkCodes(codes, (long) tokens * channels, bits, channels);
        byte[] out = new byte[off[channels]];
        for (int c = 0; c < channels; c++) {
            for (int t = 0; t < tokens; t++) {
                BitPacking.put(out, off[c], t, bits[c], codes[t * channels + c]);
            }
        }
        working(out.length);
        return out;
    }

    @Override
    public int[] unpackPerChannel(byte[] packed, int tokens, int[] bits) {
        int channels = bits.length;
        int[] off = channelLayout(tokens, bits);
        requireBytes("packed per-channel codes", packed.length, off[channels]);
        int[] codes = new int[tokens * channels];
        for (int c = 0; c < channels; c++) {
            for (int t = 0; t < tokens; t++) {
                codes[t * channels + c] = BitPacking.get(packed, off[c], t, bits[c]);
            }
        }
        working(4L * codes.length);
        return codes;
    }

    @Override
    public byte[] packPerToken(int[] codes, int tokens, int channels, int groupChannels, int bits) {
        int groups = tokenLayout(tokens, channels, groupChannels, bits);
        int gb = BitPacking.tokenGroupBytes(groupChannels, bits);
        int[] widths = uniform(channels, bits);
        PackedCacheOps.checkCodes(codes, (long) tokens * channels, widths, channels);
        byte[] out = new byte[tokens * groups * gb];
        for (int t = 0; t < tokens; t++) {
            for (int g = 0; g < groups; g++) {
                for (int i = 0; i < groupChannels; i++) {
                    BitPacking.put(out, (t * groups + g) * gb, i, bits, codes[t * channels + g * groupChannels + i]);
                }
            }
        }
        working(out.length);
        return out;
    }

    @Override
    public int[] unpackPerToken(byte[] packed, int tokens, int channels, int groupChannels, int bits) {
        int groups = tokenLayout(tokens, channels, groupChannels, bits);
        int gb = BitPacking.tokenGroupBytes(groupChannels, bits);
        requireBytes("packed per-token codes", packed.length, (long) tokens * groups * gb);
        int[] codes = new int[tokens * channels];
        for (int t = 0; t < tokens; t++) {
            for (int g = 0; g < groups; g++) {
                for (int i = 0; i < groupChannels; i++) {
                    codes[t * channels + g * groupChannels + i] = BitPacking.get(packed, (t * groups + g) * gb, i, bits);
                }
            }
        }
        working(4L * codes.length);
        return codes;
    }

    @Override
    public PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit) {
        int channels = bits.length;
        channelLayout(tokens, bits);
        requireValues(x, (long) tokens * channels);
        int[] codes = new int[tokens * channels];
        byte[] meta = new byte[4 * channels];
        for (int c = 0; c < channels; c++) {
            int m = GroupQuantizer.quantize(x, c, channels, tokens, bits[c], oneBit, codes, c, channels);
            putMeta(meta, c, m);
        }
        working(4L * codes.length + meta.length);
        return new PackedBlock(packPerChannel(codes, tokens, bits), meta);
    }

    @Override
    public PackedBlock quantizePerToken(double[] x, int tokens, int channels, int groupChannels, int bits, OneBitLevels oneBit) {
        int groups = tokenLayout(tokens, channels, groupChannels, bits);
        requireValues(x, (long) tokens * channels);
        int[] codes = new int[tokens * channels];
        byte[] meta = new byte[4 * tokens * groups];
        for (int t = 0; t < tokens; t++) {
            for (int g = 0; g < groups; g++) {
                int from = t * channels + g * groupChannels;
                int m = GroupQuantizer.quantize(x, from, 1, groupChannels, bits, oneBit, codes, from, 1);
                putMeta(meta, t * groups + g, m);
            }
        }
        working(4L * codes.length + meta.length);
        return new PackedBlock(packPerToken(codes, tokens, channels, groupChannels, bits), meta);
    }

    @Override
    public double[] dequantizePerChannel(PackedBlock block, int tokens, int[] bits) {
        int channels = bits.length;
        requireBytes("per-channel metadata", block.meta().length, 4L * channels);
        int[] codes = unpackPerChannel(block.codes(), tokens, bits);
        double[] out = new double[codes.length];
        for (int t = 0; t < tokens; t++) {
            for (int c = 0; c < channels; c++) {
                out[t * channels + c] = block.zero(c) + codes[t * channels + c] * block.scale(c);
            }
        }
        working(12L * out.length);
        return out;
    }

    @Override
    public double[] dequantizePerToken(PackedBlock block, int tokens, int channels, int groupChannels, int bits) {
        int groups = tokenLayout(tokens, channels, groupChannels, bits);
        requireBytes("per-token metadata", block.meta().length, 4L * tokens * groups);
        int[] codes = unpackPerToken(block.codes(), tokens, channels, groupChannels, bits);
        double[] out = new double[codes.length];
        for (int t = 0; t < tokens; t++) {
            for (int c = 0; c < channels; c++) {
                int g = t * groups + c / groupChannels;
                out[t * channels + c] = block.zero(g) + codes[t * channels + c] * block.scale(g);
            }
        }
        working(12L * out.length);
        return out;
    }

    @Override
    public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal,
                                  boolean withLogits) {
        PackedCacheOps.checkAttention(cache, q.length, queryHeads, queryLen, causal);
        Finite.require("q", q);
        double[][] outAndLogits = attention(cache, q, queryHeads, queryLen, causal);
        return new PackedAttention(outAndLogits[0], withLogits ? outAndLogits[1] : null);
    }

    @Override
    public float[] attendFp32(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal) {
        PackedCacheOps.checkAttention(cache, q.length, queryHeads, queryLen, causal);
        Finite.require("q", q);
        return Fp32PackedAttention.attend(cache, q, queryHeads, queryLen, causal, this::working);
    }

    @Override
    public double[] decode(PackedKvCache cache, double[] q, int queryHeads) {
        return attend(cache, q, queryHeads, 1, false, false).out();
    }

    @Override
    public float[] decodeFp32(PackedKvCache cache, float[] q, int queryHeads) {
        return attendFp32(cache, q, queryHeads, 1, false);
    }

    /** fp64: every dot product, softmax sum and output sum in ascending index order. Returns the output and the logits. */
    private double[][] attention(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal) {
        int d = cache.headDim();
        int keyLen = cache.length();
        int group = queryHeads / cache.kvHeads();
        double scale = 1.0 / Math.sqrt(d);
        PackedCacheReader reader = new PackedCacheReader(cache);
        double[] logits = new double[queryHeads * queryLen * keyLen];
        java.util.Arrays.fill(logits, Double.NEGATIVE_INFINITY);
        // Rows come a block (one quantized group, or a run of fp16 tokens) at a time, each decoded once per KV head.
        double[] rows = new double[reader.maxBlockTokens() * d];
        for (int kvh = 0; kvh < cache.kvHeads(); kvh++) {
            for (int from = 0, to; from < keyLen; from = to) {
                to = reader.blockEnd(from);
                reader.keys(from, to, kvh, rows);
                for (int j = from; j < to; j++) {
                    int row = (j - from) * d;
                    for (int h = kvh * group; h < (kvh + 1) * group; h++) {
                        for (int i = 0; i < queryLen; i++) {
                            if (j > lastVisible(i, queryLen, keyLen, causal)) {
                                continue;
                            }
                            int qOff = (h * queryLen + i) * d;
                            double dot = 0.0;
                            for (int c = 0; c < d; c++) {
                                dot += q[qOff + c] * rows[row + c];
                            }
                            logits[(h * queryLen + i) * keyLen + j] = dot * scale;
                        }
                    }
                }
            }
        }
        double[] weights = new double[logits.length];
        double[] denom = new double[queryHeads * queryLen];
        for (int qr = 0; qr < denom.length; qr++) {
            int last = lastVisible(qr % queryLen, queryLen, keyLen, causal);
            double max = Double.NEGATIVE_INFINITY;
            for (int j = 0; j <= last; j++) {
                max = Math.max(max, logits[qr * keyLen + j]);
            }
            double sum = 0.0;
            for (int j = 0; j <= last; j++) {
                weights[qr * keyLen + j] = StrictMath.exp(logits[qr * keyLen + j] - max);
                sum += weights[qr * keyLen + j];
            }
            denom[qr] = sum;
        }
        double[] out = new double[queryHeads * queryLen * d];
        for (int kvh = 0; kvh < cache.kvHeads(); kvh++) {
            for (int from = 0, to; from < keyLen; from = to) {
                to = reader.blockEnd(from);
                reader.values(from, to, kvh, rows);
                for (int j = from; j < to; j++) {
                    int row = (j - from) * d;
                    for (int h = kvh * group; h < (kvh + 1) * group; h++) {
                        for (int i = 0; i < queryLen; i++) {
                            int qr = h * queryLen + i;
                            if (j > lastVisible(i, queryLen, keyLen, causal)) {
                                continue;
                            }
                            double p = weights[qr * keyLen + j] / denom[qr];
                            for (int c = 0; c < d; c++) {
                                out[qr * d + c] += p * rows[row + c];
                            }
                        }
                    }
                }
            }
        }
        // What the kernels' working buffers hold: logits and weights apart.
        working(8L * (2L * logits.length + denom.length + out.length));
        return new double[][] {out, logits};
    }

    static int lastVisible(int i, int queryLen, int keyLen, boolean causal) {
        return causal ? i + (keyLen - queryLen) : keyLen - 1;
    }

    static int[] channelLayout(int tokens, int[] bits) {
        if (tokens <= 0 || bits.length == 0) {
            throw new IllegalArgumentException("a per-channel block needs tokens and channels, got " + tokens + " tokens, "
                    + bits.length + " channels");
        }
        for (int c = 0; c < bits.length; c++) {
            BitPacking.requireBits("channel " + c, bits[c]);
        }
        return BitPacking.channelOffsets(tokens, bits);
    }

    static int tokenLayout(int tokens, int channels, int groupChannels, int bits) {
        if (tokens <= 0) {
            throw new IllegalArgumentException("a per-token block needs tokens, got " + tokens);
        }
        BitPacking.requireBits("per-token group", bits);
        return BitPacking.groupsPerToken(channels, groupChannels);
    }

    static int[] uniform(int channels, int bits) {
        int[] w = new int[channels];
        java.util.Arrays.fill(w, bits);
        return w;
    }

    private static void putMeta(byte[] meta, int group, int scaleAndZero) {
        BitPacking.putHalf(meta, 4 * group, (short) (scaleAndZero >>> 16));
        BitPacking.putHalf(meta, 4 * group + 2, (short) scaleAndZero);
    }

    static void requireValues(double[] x, long expected) {
        if (x.length != expected) {
            throw new IllegalArgumentException("values have " + x.length + " elements, shape needs " + expected);
        }
        Finite.require("x", x);
    }

    static void requireBytes(String what, long actual, long expected) {
        if (actual != expected) {
            throw new IllegalArgumentException(what + " have " + actual + " bytes, the layout needs " + expected);
        }
    }
}
