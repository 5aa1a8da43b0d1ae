package org.mechspec.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.mechspec.compute.FloatArrays;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;
import org.mechspec.pnmix.CpuPackedCacheOps;
import org.mechspec.pnmix.DecodeBench;
import org.mechspec.pnmix.PackedCacheOps;
import org.mechspec.pnmix.PackedKvCache;
import org.mechspec.spec.FlashRule;

/**
 * An implementation's fp32 decode step (pn-mix's {@code pnmix.decode}) timed from mechspec's side, as a claim to judge,
 * not a number to trust: every timed call gets a fresh query (an implementation that caches outputs across repeated
 * inputs gains nothing, and answers wrong), every output is judged against mechspec's fp64 CPU decode under the
 * FlashAttention rule (a lazy implementation that skips work fails there), the first query is replayed at the end and
 * must give the same bits, and no call may take less than reading the cache once at the machine's copy bandwidth,
 * measured in the same run (the physics floor). The packed cache's speedup over the fp16 cache of the same tokens is
 * reported beside the byte ratio, its ceiling for a decode bound by memory.
 */
final class ImplementationBench {
    /** One cache's figures. */
    record Result(String cache, int tokens, long cacheBytes, int calls, double medianMs, double minMs, double maxMs,
                  double floorMs, double worstErrorOverBound, boolean allCorrect, boolean replayIdentical) {
        boolean belowFloor() {
            return minMs < floorMs;
        }

        boolean held() {
            return allCorrect && replayIdentical && !belowFloor();
        }

        /** Why it did not hold, or null. */
        String fault() {
            List<String> f = new ArrayList<>();
            if (!allCorrect) {
                f.add(String.format(java.util.Locale.ROOT, "an output off mechspec's decode (error %.3g of the FlashAttention bound)", worstErrorOverBound));
            }
            if (!replayIdentical) {
                f.add("the replayed first query gave other bits");
            }
            if (belowFloor()) {
                f.add(String.format(java.util.Locale.ROOT, "%.4f ms is below the %.4f ms it takes to read the cache once", minMs, floorMs));
            }
            return f.isEmpty() ? null : String.join("; ", f);
        }
    }

    private ImplementationBench() {
    }

    /**
     * Both caches of {@code tokens} tokens at {@code shape}: {@code calls} timed calls each after one untimed one.
     * {@code copyBytesPerSecond}: the machine's copy bandwidth, measured in the same run ({@link #copyBandwidth}).
     */
    static List<Result> time(PackedCacheOps ops, DecodeBench.Shape shape, int tokens, int calls, double copyBytesPerSecond) {
        PackedKvCache[] judged = DecodeBench.caches(shape, tokens, new Rng(42), ops);
        PackedKvCache[] mechspec = DecodeBench.caches(shape, tokens, new Rng(42), new CpuPackedCacheOps()); // the same tokens, mechspec's layout
        CpuPackedCacheOps cpu = new CpuPackedCacheOps();
        int hq = shape.queryHeads();
        Rng rng = new Rng(43);
        List<Result> out = new ArrayList<>();
        for (int c = 0; c < judged.length; c++) {
            PackedKvCache cache = judged[c];
            PackedKvCache reference = mechspec[c];
            float[] first = query(rng, hq * shape.headDim());
            float[] firstOut = ops.decodeFp32(cache, first, hq); // untimed: the worker's first touch
            double[] ms = new double[calls];
            double worst = 0;
            boolean correct = true;
            for (int i = 0; i < calls; i++) {
                float[] q = query(rng, hq * shape.headDim());
                long t0 = System.nanoTime();
                float[] o = ops.decodeFp32(cache, q, hq);
                ms[i] = (System.nanoTime() - t0) / 1e6;
                double[] qd = FloatArrays.widen(q);
                FlashRule.Verdict v = FlashRule.judge(FloatArrays.widen(o), cpu.decode(reference, qd, hq),
                        FloatArrays.widen(cpu.decodeFp32(reference, q, hq)), FlashRule.FP32_UNIT_ROUNDOFF, reference.length() + reference.headDim());
                correct &= v.holds();
                worst = Math.max(worst, v.bound() > 0 ? v.maxError() / v.bound() : v.maxError() > 0 ? Double.POSITIVE_INFINITY : 0);
            }
            boolean replay = Arrays.equals(firstOut, ops.decodeFp32(cache, first, hq));
            double[] sorted = ms.clone();
            Arrays.sort(sorted);
            double floorMs = cache.bytes() / copyBytesPerSecond * 1e3;
            out.add(new Result(c == 0 ? "packed" : "fp16", tokens, cache.bytes(), calls, sorted[calls / 2], sorted[0], sorted[calls - 1],
                    floorMs, worst, correct, replay));
        }
        return out;
    }

    private static float[] query(Rng rng, int n) {
        float[] q = new float[n];
        for (int i = 0; i < n; i++) {
            q[i] = (float) HalfFloat.roundToHalf(2 * rng.uniform() - 1);
        }
        return q;
    }

    /**
     * Bytes per second one thread moves copying between two 64 MiB arrays (each byte counted as read and as written),
     * the best of five: at least as fast as this machine reads memory, so a call that takes less than its cache's bytes
     * at this rate did not read them.
     */
    static double copyBandwidth() {
        byte[] a = new byte[64 << 20];
        byte[] b = new byte[a.length];
        Arrays.fill(a, (byte) 1);
        double best = 0;
        for (int i = 0; i < 5; i++) {
            long t0 = System.nanoTime();
            System.arraycopy(a, 0, b, 0, a.length);
            long ns = System.nanoTime() - t0;
            best = Math.max(best, 2.0 * a.length / (ns / 1e9));
        }
        return best;
    }
}
