package org.mechspec.pnmix;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import java.util.function.LongConsumer;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.Finite;
import org.mechspec.compute.KernelArgs;

/**
 * Split-K decode ({@code src/main/cuda/pnmix_decode.cu}) over one cache held on the device: upload once, then
 * decode queries, or {@link #enqueue} the two kernels for a timed batch. A cache without quantized groups goes to the
 * fp16 kernel, which reads plain [token][kvHead][headDim] rows; any other to the packed kernel. The launch
 * (chunk and tile sizes) is fixed at upload, so a decode is deterministic for a given cache and device.
 */
public final class CudaSplitKDecode implements AutoCloseable {
    static final String MODULE = "pnmix_decode";
    private static final int THREADS = 128;
    private static final int MAX_SHARED_BYTES = 48 * 1024;
    private static final int MAX_TILE = 64;
    /** About this many blocks per launch (several per SM on a data-centre GPU), each at least two tiles long. */
    private static final int TARGET_BLOCKS = 512;

    private final CudaBackend cuda;
    private final CacheBuffers buffers;
    private final boolean fp32;
    private final boolean fp16Cache;
    private final int queryHeads;
    private final int headDim;
    private final int chunk;
    private final int tile;
    private final int chunks;
    private final int kvHeads;
    private final CUdeviceptr q;
    private final CUdeviceptr out;
    private final KernelArgs chunkArgs;
    private final KernelArgs combineArgs;
    private final long bytesPerCall;

    private CudaSplitKDecode(CudaBackend cuda, PackedKvCache cache, int queryHeads, boolean fp32, int chunkKeys,
                             LongConsumer held) {
        PackedCacheOps.checkAttention(cache, queryHeads * cache.headDim(), queryHeads, 1, false);
        this.cuda = cuda;
        this.fp32 = fp32;
        this.fp16Cache = cache.groups().isEmpty();
        this.queryHeads = queryHeads;
        this.headDim = cache.headDim();
        this.kvHeads = cache.kvHeads();
        int e = fp32 ? Sizeof.FLOAT : Sizeof.DOUBLE;
        this.tile = tileKeys(queryHeads / kvHeads, headDim, e);
        this.chunk = chunkKeys > 0 ? chunkKeys : automaticChunk(cache.length(), kvHeads, tile);
        this.chunks = (cache.length() + chunk - 1) / chunk;
        long partials = (long) queryHeads * chunks;
        this.buffers = new CacheBuffers(cuda, held);
        boolean done = false;
        try {
            KernelArgs args = fp16Cache ? fp16Rows(cache) : CudaPackedCacheOps.uploadCache(buffers, cache, queryHeads, 1, false);
            this.q = buffers.poisoned((long) queryHeads * headDim * e);
            CUdeviceptr partM = buffers.poisoned(partials * e);
            CUdeviceptr partL = buffers.poisoned(partials * e);
            CUdeviceptr partAcc = buffers.poisoned(partials * headDim * e);
            this.out = buffers.poisoned((long) queryHeads * headDim * e);
            args.ptr(q).ptr(partM).ptr(partL).ptr(partAcc).i32(chunk).i32(tile);
            this.chunkArgs = fp32 ? args.f32((float) (1.0 / Math.sqrt(headDim))) : args.f64(1.0 / Math.sqrt(headDim));
            this.combineArgs = new KernelArgs().ptr(partM).ptr(partL).ptr(partAcc).ptr(out).i32(chunks).i32(headDim);
            // The cache once, q, the partials written and read back, the output.
            this.bytesPerCall = cacheBytesRead(cache) + 2L * queryHeads * headDim * e + 2L * partials * (headDim + 2) * e;
            done = true;
        } finally {
            if (!done) {
                buffers.close();
            }
        }
    }

    /** The cache on the device for decode steps of {@code queryHeads} heads, with the automatic launch. */
    public static CudaSplitKDecode upload(CudaBackend cuda, PackedKvCache cache, int queryHeads, boolean fp32) {
        return new CudaSplitKDecode(cuda, cache, queryHeads, fp32, 0, bytes -> { });
    }

    /**
     * The same with {@code chunkKeys} keys per block (0: automatic), the contracts' way to put keys across chunk
     * boundaries; {@code held} hears the device bytes allocated.
     */
    static CudaSplitKDecode upload(CudaBackend cuda, PackedKvCache cache, int queryHeads, boolean fp32, int chunkKeys,
                                   LongConsumer held) {
        if (chunkKeys < 0) {
            throw new IllegalArgumentException("chunkKeys must not be negative, got " + chunkKeys);
        }
        return new CudaSplitKDecode(cuda, cache, queryHeads, fp32, chunkKeys, held);
    }

    public double[] decode(double[] query) {
        requireQuery(false, query.length);
        Finite.require("q", query);
        double[] result = new double[query.length];
        decodeInto(Pointer.to(query), Pointer.to(result), (long) query.length * Sizeof.DOUBLE);
        return result;
    }

    public float[] decodeFp32(float[] query) {
        requireQuery(true, query.length);
        Finite.require("q", query);
        float[] result = new float[query.length];
        decodeInto(Pointer.to(query), Pointer.to(result), (long) query.length * Sizeof.FLOAT);
        return result;
    }

    private void decodeInto(Pointer query, Pointer result, long bytes) {
        synchronized (cuda) {
            cuMemcpyHtoD(q, query, bytes);
            launch(true);
            cuMemcpyDtoH(result, out, bytes);
        }
    }

    /** Both kernels on the last uploaded query, not waited for: for {@link CudaBackend#elapsedMs}. */
    public void enqueue() {
        launch(false);
    }

    /**
     * Which chunk kernel reads the cache ("packed" or "fp16"), keys per block and per shared-memory tile, and the
     * global-memory bytes one decode reads or writes: the cache once, the query, the partials both ways, the output.
     */
    public record Launch(String cacheKernel, int chunkKeys, int tileKeys, long bytesPerCall) {
    }

    public Launch launchShape() {
        return new Launch(fp16Cache ? "fp16" : "packed", chunk, tile, bytesPerCall);
    }

    @Override
    public void close() {
        buffers.close();
    }

    private void launch(boolean wait) {
        String suffix = fp32 ? "_f32" : "_f64";
        String chunkKernel = (fp16Cache ? "fp16_decode_chunk" : "packed_decode_chunk") + suffix;
        int e = fp32 ? Sizeof.FLOAT : Sizeof.DOUBLE;
        int shared = sharedBytes(queryHeads / kvHeads, headDim, tile, e);
        if (wait) {
            cuda.launch(MODULE, chunkKernel, kvHeads * chunks, THREADS, shared, chunkArgs);
            cuda.launch(MODULE, "decode_combine" + suffix, queryHeads, THREADS, 0, combineArgs);
        } else {
            cuda.enqueue(MODULE, chunkKernel, kvHeads * chunks, THREADS, shared, chunkArgs);
            cuda.enqueue(MODULE, "decode_combine" + suffix, queryHeads, THREADS, 0, combineArgs);
        }
    }

    private void requireQuery(boolean wantFp32, int length) {
        if (wantFp32 != fp32) {
            throw new IllegalStateException("this decode was uploaded for " + (fp32 ? "fp32" : "fp64") + " queries");
        }
        if (length != queryHeads * headDim) {
            throw new IllegalArgumentException("q has " + length + " elements, shape needs " + queryHeads * headDim);
        }
    }

    /** An fp16-only cache's sink and residual as one [token][channel] buffer each; the kernel's first six arguments. */
    private KernelArgs fp16Rows(PackedKvCache cache) {
        byte[] k = concat(cache.sinkKeys(), cache.residualKeys());
        byte[] v = concat(cache.sinkValues(), cache.residualValues());
        return new KernelArgs().ptr(buffers.upload(k)).ptr(buffers.upload(v)).i32(queryHeads).i32(cache.kvHeads())
                .i32(cache.length()).i32(cache.headDim());
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /** Every byte of the cache, plus each quantized group's per-channel bit widths and offsets (ints). */
    private static long cacheBytesRead(PackedKvCache cache) {
        return cache.bytes() + 8L * cache.channels() * cache.groups().size();
    }

    /** The q and acc rows, one padded tile, the tile's scores and three per-head scalars (pnmix_decode.cu). */
    static int sharedBytes(int groupHeads, int headDim, int tile, int elementBytes) {
        long n = 2L * groupHeads * headDim + (long) tile * (headDim + 1) + (long) groupHeads * tile + 3L * groupHeads;
        return (int) Math.min(Integer.MAX_VALUE, n * elementBytes);
    }

    /** The longest power-of-two tile up to {@link #MAX_TILE} keys whose shared memory fits 48 KiB. */
    static int tileKeys(int groupHeads, int headDim, int elementBytes) {
        for (int t = MAX_TILE; t >= 1; t /= 2) {
            if (sharedBytes(groupHeads, headDim, t, elementBytes) <= MAX_SHARED_BYTES) {
                return t;
            }
        }
        throw new IllegalArgumentException(groupHeads + " query heads per KV head × head dim " + headDim
                + " do not fit the decode kernel's 48 KiB of shared memory at " + 8 * elementBytes + " bits");
    }

    /** About {@link #TARGET_BLOCKS} blocks over all KV heads, each a whole number of tiles and at least two. */
    static int automaticChunk(int length, int kvHeads, int tile) {
        int perHead = Math.max(1, TARGET_BLOCKS / kvHeads);
        long tiles = ((long) length + tile - 1) / tile;
        long tilesPerChunk = Math.max(2, (tiles + perHead - 1) / perHead);
        return (int) Math.min(Integer.MAX_VALUE / 2, tilesPerChunk * tile);
    }
}
