package org.mechspec.pnmix;


import java.util.function.LongConsumer;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.Finite;
import org.mechspec.compute.KernelArgs;

/**
 * Split-K decode ({@code src/main/cuda/pnmix_decode.cu}) over one cache held on the device: upload once, then
 * decode queries, or {@link #enqueue} the kernel for a timed batch. One launch a call: the last block of each KV head
 * to finish merges that head's chunks, counted in a per-KV-head counter the kernel leaves at 0. A cache without quantized groups goes to the
 * fp16 kernel, which reads plain [token][kvHead][headDim] rows; any other to the packed kernel. The launch
 * (the chunks' starts and the tile) is fixed at upload, so a decode is deterministic for a given cache and device.
 *
 * <p>Splits: the automatic launch aims at {@value #BLOCKS_PER_SM} blocks per multiprocessor over all KV heads (a
 * memory-bound kernel needs every SM busy, and a few blocks each even out their uneven finishing), and gives each
 * block about {@value #MIN_TILES_PER_SPLIT} tiles of keys or more, so a short cache gets fewer, longer splits; the
 * chunks are balanced by what their keys cost the kernel ({@link ChunkSplit#balanced}: a packed cache's fp16 rows
 * weigh more, its chunks end on its groups).
 */
public final class CudaSplitKDecode implements AutoCloseable {
    static final String MODULE = "pnmix_decode";
    static final int THREADS = 128;
    /** Warps of a chunk block (THREADS / 32); the merging block runs one warp per query head. */
    static final int WARPS = THREADS / 32;
    /** The chunk kernel holds 8 channels of the query a lane, 32 lanes at most per key (pnmix_decode.cu). */
    static final int MAX_HEAD_DIM = 256;
    private static final int MAX_SHARED_BYTES = 48 * 1024;
    private static final int MAX_TILE = 64;
    public static final int BLOCKS_PER_SM = 4;
    public static final int MIN_TILES_PER_SPLIT = 2;
    /** When the driver does not report its multiprocessor count: about the first guess of 512 blocks. */
    static final int UNKNOWN_SM_COUNT = 128;

    private final CudaBackend cuda;
    private final CacheBuffers buffers;
    /** The cache's copy when this decode owns it (closed with it); null when borrowed or not needed. */
    private final CudaCacheCopy copy;
    private final boolean fp32;
    private final boolean fp16Cache;
    private final int queryHeads;
    private final int headDim;
    private final int tile;
    private final ChunkSplit split;
    private final int kvHeads;
    private final CUdeviceptr q;
    private final CUdeviceptr out;
    private final KernelArgs chunkArgs;
    private final PackedKvCache cache;
    /** Device bytes of the cache as the chunk kernel reads it (the copy and the residual, or the fp16 rows) and the dims. */
    private final long cacheDeviceBytes;
    private DecodeTraffic traffic;

    private CudaSplitKDecode(CudaBackend cuda, PackedKvCache cache, CudaCacheCopy copy, boolean ownsCopy, int queryHeads,
                             boolean fp32, int chunkKeys, LongConsumer held) {
        this.cuda = cuda;
        this.copy = ownsCopy ? copy : null;
        this.fp32 = fp32;
        this.fp16Cache = cache.groups().isEmpty();
        this.queryHeads = queryHeads;
        this.headDim = cache.headDim();
        this.kvHeads = cache.kvHeads();
        int e = fp32 ? Sizeof.FLOAT : Sizeof.DOUBLE;
        this.tile = tileKeys(queryHeads / kvHeads, headDim, e);
        this.split = chunkKeys > 0 ? ChunkSplit.uniform(cache.length(), chunkKeys)
                : ChunkSplit.balanced(cache, tile, chunksWanted(cache.length(), kvHeads, tile, smCount(cuda)));
        long partials = (long) queryHeads * split.chunks();
        long copyBytes = copy == null ? 0 : copy.bytes();
        this.buffers = new CacheBuffers(cuda, bytes -> held.accept(copyBytes + bytes));
        this.cache = cache;
        boolean done = false;
        try {
            KernelArgs args = fp16Cache ? fp16Rows(cache) : copy.args(whole(cache.residualKeys()), whole(cache.residualValues()),
                    CudaSlice.whole(buffers.upload(CudaPackedCacheOps.dims(cache, queryHeads, 1, false)), 44));
            this.cacheDeviceBytes = copyBytes + buffers.bytes();
            this.q = buffers.poisoned((long) queryHeads * headDim * e);
            CUdeviceptr partM = buffers.poisoned(partials * e);
            CUdeviceptr partL = buffers.poisoned(partials * e);
            CUdeviceptr partAcc = buffers.poisoned(partials * accRow(headDim) * e);
            this.out = buffers.poisoned((long) queryHeads * headDim * e);
            CUdeviceptr finished = buffers.upload(new int[kvHeads]); // chunks done per KV head: 0 between calls
            CUdeviceptr starts = buffers.upload(split.starts());
            args.ptr(q).ptr(partM).ptr(partL).ptr(partAcc).ptr(out).ptr(finished).ptr(starts).i32(split.chunks()).i32(tile);
            this.chunkArgs = fp32 ? args.f32((float) (1.0 / Math.sqrt(headDim))) : args.f64(1.0 / Math.sqrt(headDim));
            done = true;
        } finally {
            if (!done) {
                buffers.close(); // an owned copy is closed by upload()
            }
        }
    }

    /** The cache on the device for decode steps of {@code queryHeads} heads, with the automatic launch. */
    public static CudaSplitKDecode upload(CudaBackend cuda, PackedKvCache cache, int queryHeads, boolean fp32) {
        return upload(cuda, cache, queryHeads, fp32, 0, bytes -> { });
    }

    /**
     * The same with {@code chunkKeys} keys per block (0: automatic), the contracts' way to put keys across chunk
     * boundaries; {@code held} hears the device bytes allocated. The decode owns its copy of the cache.
     */
    static CudaSplitKDecode upload(CudaBackend cuda, PackedKvCache cache, int queryHeads, boolean fp32, int chunkKeys,
                                   LongConsumer held) {
        requireChunk(chunkKeys);
        PackedCacheOps.checkAttention(cache, queryHeads * cache.headDim(), queryHeads, 1, false);
        requireHeadDim(cache);
        CudaCacheCopy copy = cache.groups().isEmpty() ? null : CudaCacheCopy.upload(cuda, cache);
        try {
            return new CudaSplitKDecode(cuda, cache, copy, true, queryHeads, fp32, chunkKeys, held);
        } catch (RuntimeException | Error e) {
            if (copy != null) {
                copy.close();
            }
            throw e;
        }
    }

    /**
     * A decode over a copy of the cache that someone else keeps ({@link CudaCacheCopies}; null for an fp16-only cache),
     * to be closed before that copy can go: under the backend's lock, within one call.
     */
    static CudaSplitKDecode over(CudaBackend cuda, CudaCacheCopy copy, PackedKvCache cache, int queryHeads, boolean fp32,
                                 int chunkKeys, LongConsumer held) {
        requireChunk(chunkKeys);
        PackedCacheOps.checkAttention(cache, queryHeads * cache.headDim(), queryHeads, 1, false);
        requireHeadDim(cache);
        return new CudaSplitKDecode(cuda, cache, copy, false, queryHeads, fp32, chunkKeys, held);
    }

    private static void requireChunk(int chunkKeys) {
        if (chunkKeys < 0) {
            throw new IllegalArgumentException("chunkKeys must not be negative, got " + chunkKeys);
        }
    }

    private static void requireHeadDim(PackedKvCache cache) {
        if (cache.headDim() > MAX_HEAD_DIM) {
            throw new IllegalArgumentException("head dim " + cache.headDim() + " exceeds the split-K decode kernel's " + MAX_HEAD_DIM
                    + " (8 channels a lane, at most 32 lanes a key)");
        }
    }

    private CudaSlice whole(byte[] halfs) {
        return CudaSlice.whole(buffers.upload(halfs), Math.max(halfs.length, 1));
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
            cuda.upload(q, query, bytes);
            launch(true);
            cuda.download(result, out, bytes);
        }
    }

    /** Puts a query on the device for {@link #enqueue} without decoding it. */
    public void setQuery(float[] query) {
        requireQuery(true, query.length);
        Finite.require("q", query);
        synchronized (cuda) {
            cuda.upload(q, Pointer.to(query), (long) query.length * Sizeof.FLOAT);
        }
    }

    /** The kernel on the last uploaded query, not waited for: for {@link CudaBackend#elapsedMs}. */
    public void enqueue() {
        launch(false);
    }

    /**
     * Which chunk kernel reads the cache ("packed" or "fp16"); blocks of the chunk kernel ({@code splits}, KV heads ×
     * chunks), keys of the longest chunk and per tile (a chunk's unit; a warp takes windows of up to 64 keys); the device bytes
     * the cache takes; and what one call moves through global memory ({@link DecodeTraffic}: raw bytes and the bytes
     * of the 32-byte sectors it touches).
     */
    public record Launch(String cacheKernel, int splits, int longestChunkKeys, int tileKeys, long cacheDeviceBytes, long rawBytesPerCall,
                         long sectorBytesPerCall) {
    }

    public Launch launchShape() {
        if (traffic == null) {
            traffic = DecodeTraffic.of(cache, queryHeads, split.chunks(), fp32 ? Sizeof.FLOAT : Sizeof.DOUBLE);
        }
        return new Launch(fp16Cache ? "fp16" : "packed", kvHeads * split.chunks(), split.longest(), tile, cacheDeviceBytes, traffic.rawBytes(),
                traffic.sectorBytes());
    }

    @Override
    public void close() {
        try {
            buffers.close();
        } finally {
            if (copy != null) {
                copy.close();
            }
        }
    }

    private void launch(boolean wait) {
        String chunkKernel = chunkKernel(fp16Cache, fp32, cache.valueGroupChannels(), headDim, cache.valueBits());
        int e = fp32 ? Sizeof.FLOAT : Sizeof.DOUBLE;
        int shared = sharedBytes(queryHeads / kvHeads, headDim, tile, e, !fp16Cache);
        if (wait) {
            cuda.launch(MODULE, chunkKernel, kvHeads * split.chunks(), THREADS, shared, chunkArgs);
        } else {
            cuda.enqueue(MODULE, chunkKernel, kvHeads * split.chunks(), THREADS, shared, chunkArgs);
        }
    }

    /**
     * The chunk kernel for a cache: fp16 or packed, fp32 or fp64; the fp32 packed kernel one a value code width
     * ({@code _b1}, {@code _b2}, {@code _b4}) where the values fit its tensor-core path (group_tiles.cuh's
     * {@code value_tiles}: a value group a whole head; d a power of two from 16 to 128, so that a lane's run of d·b/8
     * bits lies in one word, where d = 80 at 2 bits, 48 at 4 and 96 at 1 crossed words and went wrong; a token's codes 1
     * to 8 whole words), which is then the only path those kernels have for a quantized group (the kernels do not
     * check it again); else the one that never takes it.
     */
    static String chunkKernel(boolean fp16Cache, boolean fp32, int valueGroupChannels, int headDim, int valueBits) {
        if (fp16Cache) {
            return fp32 ? "fp16_decode_chunk_f32" : "fp16_decode_chunk_f64";
        }
        if (!fp32) {
            return "packed_decode_chunk_f64";
        }
        int d = headDim;
        int b = valueBits;
        boolean valueTilesFit = valueGroupChannels == d && (b == 1 || b == 2 || b == 4) && d % 16 == 0 && Integer.bitCount(d) == 1
                && d <= 128 && d * b % 32 == 0 && d * b <= 256;
        return valueTilesFit ? "packed_decode_chunk_f32_b" + b : "packed_decode_chunk_f32";
    }

    private void requireQuery(boolean wantFp32, int length) {
        if (wantFp32 != fp32) {
            throw new IllegalStateException("this decode was uploaded for " + (fp32 ? "fp32" : "fp64") + " queries");
        }
        if (length != queryHeads * headDim) {
            throw new IllegalArgumentException("q has " + length + " elements, shape needs " + queryHeads * headDim);
        }
    }

    /** An fp16-only cache's sink and residual as one [token][channel] buffer each; the kernel's first five arguments. */
    private KernelArgs fp16Rows(PackedKvCache cache) {
        byte[] k = concat(cache.sinkKeys(), cache.residualKeys());
        byte[] v = concat(cache.sinkValues(), cache.residualValues());
        return new KernelArgs().ptr(buffers.upload(k)).ptr(buffers.upload(v)).i32(queryHeads).i32(cache.kvHeads())
                .i32(cache.headDim());
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }

    /**
     * The warps' end-of-chunk states, merged once through shared memory (pnmix_decode.cu): m, l and acc [d] per warp
     * and held query head, and the query the windows read, [d][heads held] (all {@link #headsHeld} of them, zero past
     * the group's); for the fp32 kernels also their warps' key tiles (a quantized group's keys, or the fp16 cache's
     * rows, on tensor cores) and for the fp32 packed kernel ({@code packed}), where the head dim is at most 128, its
     * warps' stages of a window's value words (copied in by cp.async). The tile does not enter (K never goes through
     * shared memory, nor fp16 V).
     */
    static int sharedBytes(int groupHeads, int headDim, int tile, int elementBytes, boolean packed) {
        long held = headsHeld(elementBytes);
        // The fp32 kernels' key tiles (KeyTiles), a warp's: before everything else a window's scores and then the
        // values' weights [2·held][64], per held head 2^-e and the zero sum (fp32), and the group's key path (an int,
        // padded to 16 bytes: key_score_bytes); after the query, per 16-channel step (head dim / 16 rounded up to
        // even: key_steps), the B fragments of its weights (8 bytes of fp16 for each of 2·held columns, hi and lo, and
        // 4 lanes), 4 lanes' 8 bytes of channel masks and 4 lanes' 32 bytes of their channels' offsets and widths
        // (KEY_STEP_WORDS).
        long tiles = elementBytes == Sizeof.FLOAT
                ? WARPS * ((headDim + 31) / 32 * 2 * (2 * held * 4 + 4 + 16) * 8 + 2 * held * 64 * 4 + 2 * held * 4 + 16) : 0;
        // And where the values can go on tensor cores (head dim at most 128: the _bB kernels), a warp's stage of its
        // window's value words: two 32-token blocks of 32 tokens' rows (up to 8 words, 12 apart) and their scale/zero
        // words (VALUE_STAGE_BYTES).
        if (packed && elementBytes == Sizeof.FLOAT && headDim <= 128) {
            tiles += WARPS * 2 * (32 * 12 + 32) * 4;
        }
        // The warps' m, l and acc for the heads a pass holds (all held: no address depends on the group's size), then
        // the query [headDim][held] (zero past the group).
        long n = tiles + (WARPS * held * (headDim + 2L) + held * headDim) * elementBytes;
        return (int) Math.min(Integer.MAX_VALUE, n);
    }

    /**
     * Elements of a chunk's acc row in the split-K partials (merge_row in pnmix_decode.cu): the head dim rounded up to
     * 32, 64, 128 or 256, the channels the merge's lanes own (1, 2, 4 or 8 a lane), so the merge finds a chunk's row
     * at a constant offset; the chunk writes d of it.
     */
    static int accRow(int headDim) {
        return headDim <= 32 ? 32 : headDim <= 64 ? 64 : headDim <= 128 ? 128 : 256;
    }

    /**
     * Query heads the chunk kernel holds in registers per walk over a chunk (HEADS_F32, HEADS_F64 in
     * pnmix_decode.cu): 4 in fp32, 1 in fp64, so the fp32 kernels fit 128 registers (4 blocks of 128 threads per SM)
     * without spills; a larger group walks the chunk again for its next heads.
     */
    static int headsHeld(int elementBytes) {
        return elementBytes == Sizeof.FLOAT ? 4 : 1;
    }

    /**
     * The longest power-of-two tile up to {@link #MAX_TILE} keys whose shared memory fits 48 KiB: chunks are whole
     * tiles. The warp-level kernel's shared memory does not grow with the tile, so this is {@link #MAX_TILE} for
     * every shape it runs.
     */
    static int tileKeys(int groupHeads, int headDim, int elementBytes) {
        for (int t = MAX_TILE; t >= 1; t /= 2) {
            if (sharedBytes(groupHeads, headDim, t, elementBytes, true) <= MAX_SHARED_BYTES) {
                return t;
            }
        }
        throw new IllegalArgumentException(groupHeads + " query heads per KV head × head dim " + headDim
                + " do not fit the decode kernel's 48 KiB of shared memory at " + 8 * elementBytes + " bits");
    }

    /** The device's multiprocessor count, or {@link #UNKNOWN_SM_COUNT} when the driver does not report it. */
    static int smCount(CudaBackend cuda) {
        int n = cuda.attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
        return n > 0 ? n : UNKNOWN_SM_COUNT;
    }

    /**
     * Chunks a KV head's keys are split into at most ({@link ChunkSplit#balanced}): {@value #BLOCKS_PER_SM} blocks per
     * SM shared among the KV heads, ⌈{@value #BLOCKS_PER_SM}·SMs / kvHeads⌉ a head, but no more than keep
     * {@value #MIN_TILES_PER_SPLIT} tiles a chunk on average.
     */
    static int chunksWanted(int length, int kvHeads, int tile, int smCount) {
        long perHead = Math.max(1, ((long) BLOCKS_PER_SM * smCount + kvHeads - 1) / kvHeads);
        long minKeys = (long) MIN_TILES_PER_SPLIT * tile;
        long byKeys = Math.max(1, ((long) length + minKeys - 1) / minKeys);
        return (int) Math.min(perHead, byKeys);
    }
}
