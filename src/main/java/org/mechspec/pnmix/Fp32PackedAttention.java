package org.mechspec.pnmix;

import static org.mechspec.pnmix.CpuPackedCacheOps.lastVisible;

import java.util.function.LongConsumer;

/**
 * The fp32 attention of {@link CpuPackedCacheOps#attendFp32} (and so of its decode): one query block's logits, softmax
 * and weighted sum over a packed cache read a block at a time ({@link PackedCacheReader}). A class of its own for its
 * inner loops, which are shaped for the JIT (below) without changing a bit of the result.
 */
final class Fp32PackedAttention {
    private Fp32PackedAttention() {
    }

    /**
     * Attention in fp32: the fp64 attention's order (CpuPackedCacheOps) in float arithmetic, the bits of its loop with
     * every result rounded to float (a double result of +, −, ×, ÷ on floats rounded to float is the correctly
     * rounded float result). A query's dot products over a block's tokens advance one channel at a time and its
     * output one token at a time, so every sum still runs in ascending index order, while the inner loops run over
     * arrays at one index, which the JIT vectorizes (not two arrays of one type at different offsets: they might
     * overlap). The loops over a block are small methods, called often, so they are compiled early. {@code working}
     * hears the bytes of the working buffers.
     */
    static float[] attend(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal,
                          LongConsumer working) {
        int d = cache.headDim();
        int keyLen = cache.length();
        int group = queryHeads / cache.kvHeads();
        float scale = (float) (1.0 / Math.sqrt(d));
        PackedCacheReader reader = new PackedCacheReader(cache);
        int block = reader.maxBlockTokens();
        // Logits, then softmax weights in place.
        float[] scores = new float[queryHeads * queryLen * keyLen];
        float[][] keys = new float[d][block];
        float[] dots = new float[block];
        for (int kvh = 0; kvh < cache.kvHeads(); kvh++) {
            for (int from = 0, to; from < keyLen; from = to) {
                to = reader.blockEnd(from);
                reader.keys(from, to, kvh, keys);
                for (int h = kvh * group; h < (kvh + 1) * group; h++) {
                    for (int i = 0; i < queryLen; i++) {
                        int n = Math.min(to, lastVisible(i, queryLen, keyLen, causal) + 1) - from;
                        int qr = h * queryLen + i;
                        if (n > 0) {
                            logits(keys, q, qr * d, n, scale, dots, scores, qr * keyLen + from);
                        }
                    }
                }
            }
        }
        float[] denom = new float[queryHeads * queryLen];
        for (int qr = 0; qr < denom.length; qr++) {
            denom[qr] = softmax(scores, qr * keyLen, lastVisible(qr % queryLen, queryLen, keyLen, causal) + 1);
        }
        float[][] out = new float[queryHeads * queryLen][d];
        float[][] values = new float[block][d];
        for (int kvh = 0; kvh < cache.kvHeads(); kvh++) {
            for (int from = 0, to; from < keyLen; from = to) {
                to = reader.blockEnd(from);
                reader.values(from, to, kvh, values);
                for (int h = kvh * group; h < (kvh + 1) * group; h++) {
                    for (int i = 0; i < queryLen; i++) {
                        int n = Math.min(to, lastVisible(i, queryLen, keyLen, causal) + 1) - from;
                        int qr = h * queryLen + i;
                        if (n > 0) {
                            addWeighted(out[qr], scores, qr * keyLen + from, denom[qr], values, n);
                        }
                    }
                }
            }
        }
        float[] flat = new float[queryHeads * queryLen * d];
        for (int qr = 0; qr < out.length; qr++) {
            System.arraycopy(out[qr], 0, flat, qr * d, d);
        }
        // What the kernels' working buffers hold: one score array for logits and weights.
        working.accept(4L * (scores.length + denom.length + flat.length));
        return flat;
    }

    /**
     * scores[at + t] = (Σ_c q[qOff + c]·keys[c][t], c ascending)·scale for the first n tokens of a block. Four
     * channels per pass over the tokens: each dot still adds its terms one at a time in channel order.
     */
    private static void logits(float[][] keys, float[] q, int qOff, int n, float scale, float[] dots, float[] scores,
                               int at) {
        java.util.Arrays.fill(dots, 0, n, 0f);
        int c = 0;
        for (; c + 4 <= keys.length; c += 4) {
            float q0 = q[qOff + c];
            float q1 = q[qOff + c + 1];
            float q2 = q[qOff + c + 2];
            float q3 = q[qOff + c + 3];
            float[] k0 = keys[c];
            float[] k1 = keys[c + 1];
            float[] k2 = keys[c + 2];
            float[] k3 = keys[c + 3];
            for (int t = 0; t < n; t++) {
                dots[t] = (((dots[t] + q0 * k0[t]) + q1 * k1[t]) + q2 * k2[t]) + q3 * k3[t];
            }
        }
        for (; c < keys.length; c++) {
            float qc = q[qOff + c];
            float[] k = keys[c];
            for (int t = 0; t < n; t++) {
                dots[t] = dots[t] + qc * k[t];
            }
        }
        for (int t = 0; t < n; t++) {
            scores[at + t] = dots[t] * scale;
        }
    }

    /** Softmax weights of s[at, at + n) in place ((float) StrictMath.exp, through {@link FloatExp}); their sum. */
    private static float softmax(float[] s, int at, int n) {
        float max = Float.NEGATIVE_INFINITY;
        for (int j = at; j < at + n; j++) {
            max = Math.max(max, s[j]);
        }
        float sum = 0f;
        for (int j = at; j < at + n; j++) {
            s[j] = FloatExp.exp(s[j] - max);
            sum += s[j];
        }
        return sum;
    }

    /**
     * o += (weights[at + t] / denom)·values[t] for the first n tokens of a block. Four tokens per pass over the
     * channels: each output still adds its terms one at a time in token order.
     */
    private static void addWeighted(float[] o, float[] weights, int at, float denom, float[][] values, int n) {
        int t = 0;
        for (; t + 4 <= n; t += 4) {
            float p0 = weights[at + t] / denom;
            float p1 = weights[at + t + 1] / denom;
            float p2 = weights[at + t + 2] / denom;
            float p3 = weights[at + t + 3] / denom;
            float[] v0 = values[t];
            float[] v1 = values[t + 1];
            float[] v2 = values[t + 2];
            float[] v3 = values[t + 3];
            for (int c = 0; c < o.length; c++) {
                o[c] = (((o[c] + p0 * v0[c]) + p1 * v1[c]) + p2 * v2[c]) + p3 * v3[c];
            }
        }
        for (; t < n; t++) {
            float p = weights[at + t] / denom;
            float[] v = values[t];
            for (int c = 0; c < o.length; c++) {
                o[c] = o[c] + p * v[c];
            }
        }
    }
}
