package org.mechspec.pnmix;

/**
 * FlashDecoding's split-K decode written out on the CPU (chunks of {@code chunk} keys, each with its max, sum and
 * unnormalized output, then merged with exp(m − M) weights), unbroken or with one of the faults a split-K kernel
 * can have. The mutant tests run the {@code cuda_split_k_decode_flash_rule} judge on it: unbroken it holds, each
 * fault must fail it. Logits come from the CPU twin, values from the block reader, so only the split-K arithmetic
 * is this class's own.
 */
final class SplitKDecodeOps extends DelegatingOps {
    enum Fault {
        NONE,
        /** Chunks merged by summing their outputs and sums, as if every chunk had the same max. */
        MERGE_WITHOUT_RESCALE,
        /** Every chunk stops one key short: the boundary key is never read. */
        DROPS_LAST_KEY_OF_EACH_CHUNK,
        /** One output element of the last head is never written (left as the poison NaN). */
        LEAVES_AN_ELEMENT_UNWRITTEN
    }

    private final int chunk;
    private final Fault fault;

    SplitKDecodeOps(int chunk, Fault fault) {
        this.chunk = chunk;
        this.fault = fault;
    }

    @Override
    public double[] decode(PackedKvCache cache, double[] q, int queryHeads) {
        int d = cache.headDim();
        int keys = cache.length();
        double[] logits = cpu.attend(cache, q, queryHeads, 1, false, true).logits();
        PackedCacheReader reader = new PackedCacheReader(cache);
        double[] row = new double[d];
        double[] out = new double[queryHeads * d];
        int group = queryHeads / cache.kvHeads();
        int chunks = (keys + chunk - 1) / chunk;
        for (int h = 0; h < queryHeads; h++) {
            double[] m = new double[chunks];
            double[] l = new double[chunks];
            double[][] acc = new double[chunks][d];
            for (int k = 0; k < chunks; k++) {
                int from = k * chunk;
                int to = Math.min(keys, from + chunk) - (fault == Fault.DROPS_LAST_KEY_OF_EACH_CHUNK && keys > 1 ? 1 : 0);
                m[k] = Double.NEGATIVE_INFINITY;
                for (int j = from; j < to; j++) {
                    m[k] = Math.max(m[k], logits[h * keys + j]);
                }
                for (int j = from; j < to; j++) {
                    double p = Math.exp(logits[h * keys + j] - m[k]);
                    l[k] += p;
                    reader.value(j, h / group, row);
                    for (int c = 0; c < d; c++) {
                        acc[k][c] += p * row[c];
                    }
                }
            }
            double max = Double.NEGATIVE_INFINITY;
            for (double mk : m) {
                max = Math.max(max, mk);
            }
            double denom = 0;
            for (int k = 0; k < chunks; k++) {
                denom += weight(m[k], max) * l[k];
            }
            for (int c = 0; c < d; c++) {
                double sum = 0;
                for (int k = 0; k < chunks; k++) {
                    sum += weight(m[k], max) * acc[k][c];
                }
                out[h * d + c] = sum / denom;
            }
        }
        if (fault == Fault.LEAVES_AN_ELEMENT_UNWRITTEN) {
            out[out.length - 1] = Double.NaN;
        }
        return out;
    }

    @Override
    public float[] decodeFp32(PackedKvCache cache, float[] q, int queryHeads) {
        double[] qd = new double[q.length];
        for (int i = 0; i < q.length; i++) {
            qd[i] = q[i];
        }
        double[] out = decode(cache, qd, queryHeads);
        float[] f = new float[out.length];
        for (int i = 0; i < out.length; i++) {
            f[i] = (float) out[i];
        }
        return f;
    }

    private double weight(double chunkMax, double max) {
        if (chunkMax == Double.NEGATIVE_INFINITY) {
            return 0; // an empty chunk (only when keys are dropped)
        }
        return fault == Fault.MERGE_WITHOUT_RESCALE ? 1 : Math.exp(chunkMax - max);
    }
}
