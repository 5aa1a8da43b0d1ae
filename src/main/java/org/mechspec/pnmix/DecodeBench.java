package org.mechspec.pnmix;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import jcuda.driver.CUdevice_attribute;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;

/**
 * Times one fp32 decode step of the split-K kernels ({@link CudaSplitKDecode}) over the pn-mix packed cache and over
 * an fp16 cache of the same tokens, with CUDA events around back-to-back launches. The packed cache follows the
 * pinned pn-mix cache policy (fp16 sink and residual, 3/1-bit keys per channel on half the RoPE pairs each,
 * 2-bit values) at the shape asked; rows are random fp16 values, which the timing does not depend on. Each cache is
 * put on the device in as many copies as {@link WorkingSet} asks for, and consecutive calls take the copies in turn,
 * so a timed call reads its cache from DRAM, not from an L2 that the previous call filled.
 */
public final class DecodeBench {
    /** A decode layer: query heads sharing {@code kvHeads} KV heads of {@code headDim}. */
    public record Shape(String name, int queryHeads, int kvHeads, int headDim) {
    }

    /** A realistic layer (8 KV heads × 128 dims, 32 query heads) and the pn-mix protocol's own. */
    public static final List<Shape> SHAPES = List.of(new Shape("layer-32q-8kv-128d", 32, 8, 128),
            new Shape("pn-mix-8q-2kv-32d", 8, 2, 32));

    /**
     * Per-call device time of one cache, the median and the least over the rounds, with its launch and working set; and
     * the host's time to enqueue one call (both launches; median over the rounds). Where enqueueing takes as long as the
     * device time, the events may have timed the host feeding the stream, not the kernels ({@link #hostBound()}).
     */
    public record Timing(Shape shape, int tokens, String cache, long cacheBytes, CudaSplitKDecode.Launch launch,
                         WorkingSet workingSet, double medianMs, double minMs, double hostEnqueueMs) {
        /** Whether the host enqueued a call in at least half the device time of one: the device time may be the host's. */
        public boolean hostBound() {
            return hostEnqueueMs >= 0.5 * medianMs;
        }
    }

    private DecodeBench() {
    }

    /**
     * Packed and fp16 timings at one shape and length: {@code warmup} untimed calls, then {@code rounds} timed batches
     * of {@code launches} calls each, every call on the next copy of the cache.
     */
    public static List<Timing> time(CudaBackend cuda, Shape shape, int tokens, int warmup, int rounds, int launches) {
        PackedKvCache[] caches = caches(shape, tokens, new Rng(42));
        float[] q = new float[shape.queryHeads() * shape.headDim()];
        Rng rng = new Rng(43);
        for (int i = 0; i < q.length; i++) {
            q[i] = (float) HalfFloat.roundToHalf(2 * rng.uniform() - 1);
        }
        long l2 = cuda.attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
        List<Timing> out = new ArrayList<>();
        for (PackedKvCache cache : caches) {
            List<CudaSplitKDecode> copies = new ArrayList<>();
            try {
                copies.add(CudaSplitKDecode.upload(cuda, cache, shape.queryHeads(), true));
                CudaSplitKDecode.Launch launch = copies.get(0).launchShape();
                WorkingSet set = WorkingSet.of(l2, launch.cacheDeviceBytes());
                while (copies.size() < set.copies()) {
                    copies.add(CudaSplitKDecode.upload(cuda, cache, shape.queryHeads(), true));
                }
                for (CudaSplitKDecode c : copies) {
                    c.setQuery(q);
                }
                int[] next = {0};
                Runnable call = () -> copies.get(next[0]++ % copies.size()).enqueue();
                cuda.elapsedMs(() -> repeat(call, Math.max(1, warmup)));
                double[] ms = new double[rounds];
                double[] host = new double[rounds];
                for (int r = 0; r < rounds; r++) {
                    long[] enqueueNs = new long[1];
                    ms[r] = cuda.elapsedMs(() -> {
                        long t0 = System.nanoTime();
                        repeat(call, launches);
                        enqueueNs[0] = System.nanoTime() - t0;
                    }) / launches;
                    host[r] = enqueueNs[0] / 1e6 / launches;
                }
                Arrays.sort(ms);
                Arrays.sort(host);
                out.add(new Timing(shape, tokens, launch.cacheKernel(), cache.bytes(), launch, set, ms[rounds / 2], ms[0],
                        host[rounds / 2]));
            } finally {
                copies.forEach(CudaSplitKDecode::close);
            }
        }
        return out;
    }

    /**
     * The device's copy rate, measured: device-to-device copies of a buffer of {@code bytes} (at least twice the L2,
     * so the copy streams DRAM), {@code copies} back to back between events per round; bytes moved count the read and
     * the write. What a decode's bytes can at best be streamed at: the bench reports each call's share of it.
     */
    public record CopyRate(long bufferBytes, int copies, int rounds, double medianBytesPerSecond, double maxBytesPerSecond) {
    }

    /** {@link CopyRate} over a buffer of max(2 × L2, {@code minBytes}) bytes. */
    public static CopyRate copyRate(CudaBackend cuda, long minBytes, int rounds, int copies) {
        long l2 = Math.max(0, cuda.attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
        long bytes = Math.max(2 * l2, minBytes);
        try (CudaBackend.DeviceBuffers buffers = cuda.new DeviceBuffers()) {
            jcuda.driver.CUdeviceptr src = buffers.poisoned(bytes);
            jcuda.driver.CUdeviceptr dst = buffers.poisoned(bytes);
            cuda.elapsedMs(() -> cuda.enqueueCopy(dst, src, bytes)); // first touch, untimed
            double[] rate = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                double ms = cuda.elapsedMs(() -> repeat(() -> cuda.enqueueCopy(dst, src, bytes), copies));
                rate[r] = 2.0 * bytes * copies / (ms * 1e-3);
            }
            Arrays.sort(rate);
            return new CopyRate(bytes, copies, rounds, rate[rounds / 2], rate[rounds - 1]);
        }
    }

    private static void repeat(Runnable call, int times) {
        for (int i = 0; i < times; i++) {
            call.run();
        }
    }

    /** The packed cache of {@code tokens} random fp16 rows and the fp16 cache of the same rows. */
    static PackedKvCache[] caches(Shape shape, int tokens, Rng rng) {
        return caches(shape, tokens, rng, new CpuPackedCacheOps());
    }

    /** The same, the packed cache built by {@code owner}'s quantizers (in its own layout, for its own decode to read). */
    public static PackedKvCache[] caches(Shape shape, int tokens, Rng rng, PackedCacheOps owner) {
        PnMixConfig pinned = PnMixConfig.pinned();
        PnMixConfig c = new PnMixConfig(new PnMixConfig.Model(256, 256, shape.queryHeads(), shape.kvHeads(), shape.headDim(),
                10000.0, PairLayout.ADJACENT), pinned.cache(), pinned.tokens());
        PairMask mask = RandomMasks.draw(rng, 1, shape.kvHeads(), c.model().pairs(), c.highPairsPerHead())[0];
        StreamingCache packed = new StreamingCache(c, owner, mask.channelBits(shape.headDim(),
                c.model().layout(), c.cache().highBits(), c.cache().lowBits()), mask.bytes());
        int channels = c.model().kvChannels();
        byte[] keys = new byte[2 * tokens * channels];
        byte[] values = new byte[2 * tokens * channels];
        double[] k = new double[channels];
        double[] v = new double[channels];
        for (int t = 0; t < tokens; t++) {
            for (int i = 0; i < channels; i++) {
                k[i] = HalfFloat.roundToHalf(4 * rng.uniform() - 2);
                v[i] = HalfFloat.roundToHalf(4 * rng.uniform() - 2);
                BitPacking.putHalf(keys, 2 * (t * channels + i), HalfFloat.toHalfBits(k[i]));
                BitPacking.putHalf(values, 2 * (t * channels + i), HalfFloat.toHalfBits(v[i]));
            }
            packed.append(k, v);
        }
        return new PackedKvCache[] {packed.view(), PackedKvCache.fp16(shape.kvHeads(), shape.headDim(), tokens, keys, values)};
    }
}
