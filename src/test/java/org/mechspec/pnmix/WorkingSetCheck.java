package org.mechspec.pnmix;

import org.mechspec.compute.Rng;

/**
 * {@code packed_attention_working_set_bounded}: attention over a packed cache holds the cache and a working set the
 * size of a tile, never a dequantized copy of the cache. At a cache of {@link #LENGTH} tokens (2 KV heads × 128, 8
 * query heads, the pinned policy's 128-token groups: about 3.5 MB packed), the memory a decode (fp64 and fp32) and a
 * two-query causal attend (fp64) hold beyond what was held before is measured from outside the implementation
 * ({@link TransientMemory}) and judged against
 * <pre>
 *   bound = 2·(the call's inputs: cache, key bit widths, q) + 2·out       (a reader's copy and the arrays)
 *         + 6·S, S = 8·Hq·Tq·length bytes                                 (fp64 logits, weights and temporaries)
 *         + 4·T, T = 2·8·tile·kvHeads·headDim bytes, tile = the largest block: sink, group or residual
 *         + 16 MiB                                                        (interpreter and allocator)
 * </pre>
 * A dequantized copy of the whole cache's keys and values in fp64 (2·8·length·kvHeads·headDim, 84 MB here) is more
 * than twice the bound (about 34 MB for a decode), so the measurement resolves it.
 */
final class WorkingSetCheck {
    /** 160 groups of 128 tokens after the 32 sink tokens, and 37 residual tokens. */
    static final int LENGTH = 32 + 160 * 128 + 37;
    static final int KV_HEADS = 2;
    static final int QUERY_HEADS_PER_KV_HEAD = 4;
    static final int HEAD_DIM = 128;
    static final int ATTEND_QUERIES = 2;
    static final long ALLOWANCE = 16L << 20;

    private WorkingSetCheck() {
    }

    /** One measured call: what it held at its peak, the bound, and what a whole dequantized copy would take. */
    record Measured(String call, String metric, long peakBytes, long boundBytes, long wholeCacheBytes) {
        boolean held() {
            return peakBytes <= boundBytes;
        }

        @Override
        public String toString() {
            return call + ": " + peakBytes + " bytes " + (held() ? "<=" : ">") + " bound " + boundBytes
                    + " (a dequantized copy of the whole cache: " + wholeCacheBytes + ")";
        }
    }

    record Verdict(String measuredBy, Measured decode64, Measured decode32, Measured attend64) {
        boolean held() {
            return decode64.held() && decode32.held() && attend64.held();
        }

        /** The call that held the most relative to its bound. */
        Measured worst() {
            Measured w = decode64;
            for (Measured m : new Measured[] {decode32, attend64}) {
                if ((double) m.peakBytes() / m.boundBytes() > (double) w.peakBytes() / w.boundBytes()) {
                    w = m;
                }
            }
            return w;
        }

        @Override
        public String toString() {
            return "measured as " + measuredBy + ": " + decode64 + "; " + decode32 + "; " + attend64;
        }
    }

    /** The seed's cache, built by the judged implementation's own quantizers. */
    static PnMixKernelChecks.DecodeCase cacheFor(long seed, PackedCacheOps owner) {
        return PnMixKernelChecks.decodeCase("working set, " + LENGTH + " keys", new Rng(seed * 131 + 3), KV_HEADS, QUERY_HEADS_PER_KV_HEAD,
                HEAD_DIM, LENGTH, 0, false, false, owner, PnMixConfig.pinned().cache());
    }

    static Verdict judge(PackedCacheOps ops, TransientMemory memory, PnMixKernelChecks.DecodeCase c) {
        PackedKvCache cache = c.packed();
        int hq = c.queryHeads();
        double[] q1 = c.q();
        float[] q1f = c.qf();
        double[] q2 = new double[hq * ATTEND_QUERIES * cache.headDim()];
        for (int h = 0; h < hq; h++) {
            for (int i = 0; i < ATTEND_QUERIES; i++) {
                System.arraycopy(q1, h * cache.headDim(), q2, (h * ATTEND_QUERIES + i) * cache.headDim(), cache.headDim());
            }
        }
        Measured d64 = measure("decode f64", "packed_decode_f64_peak_bytes", memory, cache, hq, 1, () -> ops.decode(cache, q1, hq));
        Measured d32 = measure("decode f32", "packed_decode_f32_peak_bytes", memory, cache, hq, 1, () -> ops.decodeFp32(cache, q1f, hq));
        Measured a64 = measure("attend f64, " + ATTEND_QUERIES + " causal queries", "packed_attend_f64_peak_bytes", memory, cache, hq, ATTEND_QUERIES,
                () -> ops.attend(cache, q2, hq, ATTEND_QUERIES, true, false));
        return new Verdict(memory.what(), d64, d32, a64);
    }

    private static Measured measure(String call, String metric, TransientMemory memory, PackedKvCache cache, int hq, int tq, Runnable body) {
        long peak = memory.during(body);
        return new Measured(call, metric, peak, bound(cache, hq, tq), wholeCacheBytes(cache));
    }

    static long bound(PackedKvCache cache, int hq, int tq) {
        long channels = cache.channels();
        long inputs = cache.bytes() + 4L * channels * cache.groups().size() + 8L * hq * tq * cache.headDim();
        long out = 8L * hq * tq * cache.headDim();
        long scores = 8L * hq * tq * cache.length();
        int tile = Math.max(cache.sinkTokens(), Math.max(cache.groupTokens(), cache.residualTokens()));
        long tileBytes = 2L * 8 * tile * channels;
        return 2 * inputs + 2 * out + 6 * scores + 4 * tileBytes + ALLOWANCE;
    }

    static long wholeCacheBytes(PackedKvCache cache) {
        return 2L * 8 * cache.length() * cache.channels();
    }
}
