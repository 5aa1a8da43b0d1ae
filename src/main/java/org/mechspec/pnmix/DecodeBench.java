package org.mechspec.pnmix;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;

/**
 * Times one fp32 decode step of the split-K kernels ({@link CudaSplitKDecode}) over the pn-mix packed cache and over
 * an fp16 cache of the same tokens, with CUDA events around back-to-back launches. The packed cache follows the
 * pinned pn-mix cache policy (fp16 sink and residual, 3/1-bit keys per channel on half the RoPE pairs each,
 * 2-bit values) at the shape asked; rows are random fp16 values, which the timing does not depend on.
 */
public final class DecodeBench {
    /** A decode layer: query heads sharing {@code kvHeads} KV heads of {@code headDim}. */
    public record Shape(String name, int queryHeads, int kvHeads, int headDim) {
    }

    /** A realistic layer (8 KV heads × 128 dims, 32 query heads) and the pn-mix protocol's own. */
    public static final List<Shape> SHAPES = List.of(new Shape("layer-32q-8kv-128d", 32, 8, 128),
            new Shape("pn-mix-8q-2kv-32d", 8, 2, 32));

    /** Per-call device time of one cache: the median and the least over the rounds. */
    public record Timing(Shape shape, int tokens, String cache, long cacheBytes, long bytesPerCall, int chunkKeys,
                         int tileKeys, double medianMs, double minMs) {
    }

    private DecodeBench() {
    }

    /** Packed and fp16 timings at one shape and length: {@code rounds} timed batches of {@code launches} calls each. */
    public static List<Timing> time(CudaBackend cuda, Shape shape, int tokens, int warmup, int rounds, int launches) {
        PackedKvCache[] caches = caches(shape, tokens, new Rng(42));
        float[] q = new float[shape.queryHeads() * shape.headDim()];
        Rng rng = new Rng(43);
        for (int i = 0; i < q.length; i++) {
            q[i] = (float) HalfFloat.roundToHalf(2 * rng.uniform() - 1);
        }
        List<Timing> out = new ArrayList<>();
        for (PackedKvCache cache : caches) {
            try (CudaSplitKDecode decode = CudaSplitKDecode.upload(cuda, cache, shape.queryHeads(), true)) {
                for (int w = 0; w < Math.max(1, warmup); w++) {
                    decode.decodeFp32(q); // the first also puts q on the device for enqueue()
                }
                double[] ms = new double[rounds];
                for (int r = 0; r < rounds; r++) {
                    ms[r] = cuda.elapsedMs(() -> {
                        for (int i = 0; i < launches; i++) {
                            decode.enqueue();
                        }
                    }) / launches;
                }
                Arrays.sort(ms);
                CudaSplitKDecode.Launch launch = decode.launchShape();
                out.add(new Timing(shape, tokens, launch.cacheKernel(), cache.bytes(), launch.bytesPerCall(),
                        launch.chunkKeys(), launch.tileKeys(), ms[rounds / 2], ms[0]));
            }
        }
        return out;
    }

    /** The packed cache of {@code tokens} random fp16 rows and the fp16 cache of the same rows. */
    static PackedKvCache[] caches(Shape shape, int tokens, Rng rng) {
        PnMixConfig pinned = PnMixConfig.pinned();
        PnMixConfig c = new PnMixConfig(new PnMixConfig.Model(256, 256, shape.queryHeads(), shape.kvHeads(), shape.headDim(),
                10000.0, PairLayout.ADJACENT), pinned.cache(), pinned.tokens());
        PairMask mask = RandomMasks.draw(rng, 1, shape.kvHeads(), c.model().pairs(), c.highPairsPerHead())[0];
        StreamingCache packed = new StreamingCache(c, new CpuPackedCacheOps(), mask.channelBits(shape.headDim(),
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
