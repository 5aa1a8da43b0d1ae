package org.mechspec.pnmix;

import org.mechspec.compute.FloatArrays;

/**
 * Packed attention written plainly, apart from the CPU twin's: the cache read back through the twin's dequantizers,
 * then an online softmax one key at a time (another order of rounding), in fp64 or in float arithmetic; with one fault
 * that real kernels shipped, or none (right but different: the property halves must pass it).
 */
final class PlainPackedAttentionOps extends DelegatingOps {
    enum Fault {
        NONE,
        /** exp of the raw logits: right until the logits reach the hundreds. */
        NO_MAX_SHIFT,
        /** q·k over at most 64 channels (a kernel tiled for head dims up to 64). */
        HEAD_DIM_CAPPED_AT_64,
        /** query head h reads KV head h / 2 (a kernel written for one GQA ratio). */
        GQA_RATIO_TWO
    }

    private final Fault fault;

    PlainPackedAttentionOps(Fault fault) {
        this.fault = fault;
    }

    @Override
    public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal, boolean withLogits) {
        if (withLogits) {
            return cpu.attend(cache, q, queryHeads, queryLen, causal, true); // logits are not what this variant is about
        }
        return new PackedAttention(attention(cache, q, queryHeads, queryLen, causal, false), null);
    }

    @Override
    public float[] attendFp32(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal) {
        return FloatArrays.narrow(attention(cache, FloatArrays.widen(q), queryHeads, queryLen, causal, true));
    }

    /** {@code fp32}: every operation rounded to float. */
    private double[] attention(PackedKvCache cache, double[] q, int hq, int tq, boolean causal, boolean fp32) {
        int kvHeads = cache.kvHeads();
        int d = cache.headDim();
        int tk = cache.length();
        double[] k = CacheContents.headMajor(CacheContents.keys(cache, cpu), tk, kvHeads, d);
        double[] v = CacheContents.headMajor(CacheContents.values(cache, cpu), tk, kvHeads, d);
        double scale = round(1 / Math.sqrt(d), fp32);
        int channels = fault == Fault.HEAD_DIM_CAPPED_AT_64 ? Math.min(d, 64) : d;
        double[] out = new double[hq * tq * d];
        double[] acc = new double[d];
        for (int h = 0; h < hq; h++) {
            int kvHead = fault == Fault.GQA_RATIO_TWO ? Math.min(h / 2, kvHeads - 1) : h / (hq / kvHeads);
            for (int i = 0; i < tq; i++) {
                int last = causal ? tk - tq + i : tk - 1;
                double m = Double.NEGATIVE_INFINITY;
                double l = 0;
                java.util.Arrays.fill(acc, 0);
                int qOff = (h * tq + i) * d;
                for (int j = 0; j <= last; j++) {
                    int kOff = (kvHead * tk + j) * d;
                    double s = 0;
                    for (int c = 0; c < channels; c++) {
                        s = round(s + round(round(q[qOff + c], fp32) * round(k[kOff + c], fp32), fp32), fp32);
                    }
                    s = round(s * scale, fp32);
                    double p;
                    double correction;
                    if (fault == Fault.NO_MAX_SHIFT) {
                        p = round(Math.exp(s), fp32);
                        correction = 1;
                    } else {
                        double mNew = Math.max(m, s);
                        correction = round(Math.exp(m - mNew), fp32);
                        p = round(Math.exp(s - mNew), fp32);
                        m = mNew;
                    }
                    l = round(round(l * correction, fp32) + p, fp32);
                    for (int c = 0; c < d; c++) {
                        acc[c] = round(round(acc[c] * correction, fp32) + round(p * round(v[kOff + c], fp32), fp32), fp32);
                    }
                }
                for (int c = 0; c < d; c++) {
                    out[qOff + c] = round(acc[c] / l, fp32);
                }
            }
        }
        return out;
    }

    private static double round(double x, boolean fp32) {
        return fp32 ? (float) x : x;
    }
}
