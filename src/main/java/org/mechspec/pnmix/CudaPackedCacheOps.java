package org.mechspec.pnmix;

import java.util.function.Function;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.Finite;
import org.mechspec.compute.KernelArgs;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.pnmix.CudaScratch.Role;

/**
 * {@link PackedCacheOps} on CUDA: the kernels of {@code src/main/cuda/pnmix.cu}. Every output buffer is poisoned
 * (0xFF bytes: NaN for floats, −1 for int codes) before a launch, so an element a kernel forgot to write shows up
 * in the differential contracts. Attention and decode keep a cache's sink and groups on the device across calls
 * ({@link CudaCacheCopies}): a call uploads only what it brings anew (the query, the fp16 residual, the dims) into
 * reused scratch buffers. Quantize, pack and their inverses free their buffers when they return.
 * {@link #peakWorkingBytes()} is the most device memory one call's kernel reads and writes: the cache's copy plus
 * the call's buffers, each at its exact size.
 */
public final class CudaPackedCacheOps implements PackedCacheOps {
    private static final int THREADS = 128;
    private static final String MODULE = "pnmix";

    private final CudaBackend backend;
    private long peakWorkingBytes;

    CudaPackedCacheOps(CudaBackend backend) {
        this.backend = backend;
    }

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public long peakWorkingBytes() {
        return peakWorkingBytes;
    }

    @Override
    public byte[] packPerChannel(int[] codes, int tokens, int[] bits) {
        int channels = bits.length;
        int[] off = CpuPackedCacheOps.channelLayout(tokens, bits);
        PackedCacheOps.checkCodes(codes, (long) tokens * channels, bits, channels);
        byte[] out = new byte[off[channels]];
        try (CacheBuffers b = buffers()) {
            CUdeviceptr dCodes = b.upload(codes);
            CUdeviceptr dBits = b.upload(bits);
            CUdeviceptr dOff = b.upload(off);
            CUdeviceptr dOut = b.poisoned(out.length);
            launch("pack_per_channel", channels,
                    new KernelArgs().ptr(dCodes).ptr(dOut).ptr(dBits).ptr(dOff).i32(tokens).i32(channels));
            b.download(out, dOut);
        }
        return out;
    }

    @Override
    public int[] unpackPerChannel(byte[] packed, int tokens, int[] bits) {
        int channels = bits.length;
        int[] off = CpuPackedCacheOps.channelLayout(tokens, bits);
        CpuPackedCacheOps.requireBytes("packed per-channel codes", packed.length, off[channels]);
        int[] codes = new int[tokens * channels];
        try (CacheBuffers b = buffers()) {
            CUdeviceptr dPacked = b.upload(packed);
            CUdeviceptr dBits = b.upload(bits);
            CUdeviceptr dOff = b.upload(off);
            CUdeviceptr dCodes = b.poisoned(4L * codes.length);
            launch("unpack_per_channel", codes.length,
                    new KernelArgs().ptr(dPacked).ptr(dCodes).ptr(dBits).ptr(dOff).i32(tokens).i32(channels));
            b.download(codes, dCodes);
        }
        return codes;
    }

    @Override
    public byte[] packPerToken(int[] codes, int tokens, int channels, int groupChannels, int bits) {
        int groups = CpuPackedCacheOps.tokenLayout(tokens, channels, groupChannels, bits);
        PackedCacheOps.checkCodes(codes, (long) tokens * channels, CpuPackedCacheOps.uniform(channels, bits), channels);
        byte[] out = new byte[tokens * groups * BitPacking.tokenGroupBytes(groupChannels, bits)];
        try (CacheBuffers b = buffers()) {
            CUdeviceptr dCodes = b.upload(codes);
            CUdeviceptr dOut = b.poisoned(out.length);
            launch("pack_per_token", tokens * groups,
                    new KernelArgs().ptr(dCodes).ptr(dOut).i32(tokens).i32(channels).i32(groupChannels).i32(bits));
            b.download(out, dOut);
        }
        return out;
    }

    @Override
    public int[] unpackPerToken(byte[] packed, int tokens, int channels, int groupChannels, int bits) {
        int groups = CpuPackedCacheOps.tokenLayout(tokens, channels, groupChannels, bits);
        CpuPackedCacheOps.requireBytes("packed per-token codes", packed.length,
                (long) tokens * groups * BitPacking.tokenGroupBytes(groupChannels, bits));
        int[] codes = new int[tokens * channels];
        try (CacheBuffers b = buffers()) {
            CUdeviceptr dPacked = b.upload(packed);
            CUdeviceptr dCodes = b.poisoned(4L * codes.length);
            launch("unpack_per_token", codes.length,
                    new KernelArgs().ptr(dPacked).ptr(dCodes).i32(tokens).i32(channels).i32(groupChannels).i32(bits));
            b.download(codes, dCodes);
        }
        return codes;
    }

    @Override
    public PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit) {
        int channels = bits.length;
        int[] off = CpuPackedCacheOps.channelLayout(tokens, bits);
        CpuPackedCacheOps.requireValues(x, (long) tokens * channels);
        byte[] codes = new byte[off[channels]];
        byte[] meta = new byte[4 * channels];
        try (CacheBuffers b = buffers()) {
            CUdeviceptr dx = b.upload(x);
            CUdeviceptr dCodes = b.poisoned(codes.length);
            CUdeviceptr dMeta = b.poisoned(meta.length);
            CUdeviceptr dBits = b.upload(bits);
            CUdeviceptr dOff = b.upload(off);
            launch("quantize_per_channel", channels,
                    new KernelArgs().ptr(dx).ptr(dCodes).ptr(dMeta).ptr(dBits).ptr(dOff).i32(tokens).i32(channels).i32(means(oneBit)));
            b.download(codes, dCodes);
            b.download(meta, dMeta);
        }
        return finiteLevels(new PackedBlock(codes, meta));
    }

    @Override
    public PackedBlock quantizePerToken(double[] x, int tokens, int channels, int groupChannels, int bits, OneBitLevels oneBit) {
        int groups = CpuPackedCacheOps.tokenLayout(tokens, channels, groupChannels, bits);
        CpuPackedCacheOps.requireValues(x, (long) tokens * channels);
        byte[] codes = new byte[tokens * groups * BitPacking.tokenGroupBytes(groupChannels, bits)];
        byte[] meta = new byte[4 * tokens * groups];
        try (CacheBuffers b = buffers()) {
            CUdeviceptr dx = b.upload(x);
            CUdeviceptr dCodes = b.poisoned(codes.length);
            CUdeviceptr dMeta = b.poisoned(meta.length);
            launch("quantize_per_token", tokens * groups,
                    new KernelArgs().ptr(dx).ptr(dCodes).ptr(dMeta).i32(tokens).i32(channels).i32(groupChannels).i32(bits).i32(means(oneBit)));
            b.download(codes, dCodes);
            b.download(meta, dMeta);
        }
        return finiteLevels(new PackedBlock(codes, meta));
    }

    @Override
    public double[] dequantizePerChannel(PackedBlock block, int tokens, int[] bits) {
        int channels = bits.length;
        int[] off = CpuPackedCacheOps.channelLayout(tokens, bits);
        CpuPackedCacheOps.requireBytes("packed per-channel codes", block.codes().length, off[channels]);
        CpuPackedCacheOps.requireBytes("per-channel metadata", block.meta().length, 4L * channels);
        double[] out = new double[tokens * channels];
        try (CacheBuffers b = buffers()) {
            CUdeviceptr dCodes = b.upload(block.codes());
            CUdeviceptr dMeta = b.upload(block.meta());
            CUdeviceptr dOut = b.poisoned(8L * out.length);
            CUdeviceptr dBits = b.upload(bits);
            CUdeviceptr dOff = b.upload(off);
            launch("dequantize_per_channel", out.length,
                    new KernelArgs().ptr(dCodes).ptr(dMeta).ptr(dOut).ptr(dBits).ptr(dOff).i32(tokens).i32(channels));
            b.download(out, dOut);
        }
        return out;
    }

    @Override
    public double[] dequantizePerToken(PackedBlock block, int tokens, int channels, int groupChannels, int bits) {
        int groups = CpuPackedCacheOps.tokenLayout(tokens, channels, groupChannels, bits);
        CpuPackedCacheOps.requireBytes("packed per-token codes", block.codes().length,
                (long) tokens * groups * BitPacking.tokenGroupBytes(groupChannels, bits));
        CpuPackedCacheOps.requireBytes("per-token metadata", block.meta().length, 4L * tokens * groups);
        double[] out = new double[tokens * channels];
        try (CacheBuffers b = buffers()) {
            CUdeviceptr dCodes = b.upload(block.codes());
            CUdeviceptr dMeta = b.upload(block.meta());
            CUdeviceptr dOut = b.poisoned(8L * out.length);
            launch("dequantize_per_token", out.length,
                    new KernelArgs().ptr(dCodes).ptr(dMeta).ptr(dOut).i32(tokens).i32(channels).i32(groupChannels).i32(bits));
            b.download(out, dOut);
        }
        return out;
    }

    @Override
    public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal,
                                  boolean withLogits) {
        PackedCacheOps.checkAttention(cache, q.length, queryHeads, queryLen, causal);
        Finite.require("q", q);
        int rows = queryHeads * queryLen;
        double[] out = new double[rows * cache.headDim()];
        double[] logits = new double[rows * cache.length()];
        onDevice(device -> {
            CudaScratch s = device.scratch();
            CacheArgs c = cacheArgs(device, cache, queryHeads, queryLen, causal);
            KernelArgs args = c.args();
            CudaSlice dq = s.upload(Role.QUERY, q);
            CudaSlice dOut = s.poisoned(Role.OUTPUT, 8L * out.length, Sizeof.DOUBLE);
            CudaSlice dScores = s.poisoned(Role.LOGITS, 8L * logits.length, Sizeof.DOUBLE);
            CudaSlice dWeights = s.poisoned(Role.WEIGHTS, 8L * logits.length, Sizeof.DOUBLE);
            held(c.bytes() + dq.bytes() + dOut.bytes() + dScores.bytes() + dWeights.bytes());
            dq.into(args);
            dOut.into(args);
            dScores.into(args);
            dWeights.into(args);
            launchAttention("packed_attention_f64", rows, args.f64(1.0 / Math.sqrt(cache.headDim())), Sizeof.DOUBLE);
            s.download(out, dOut);
            if (withLogits) {
                s.download(logits, dScores);
            }
            return null;
        });
        return new PackedAttention(out, withLogits ? logits : null);
    }

    @Override
    public float[] attendFp32(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal) {
        PackedCacheOps.checkAttention(cache, q.length, queryHeads, queryLen, causal);
        Finite.require("q", q);
        int rows = queryHeads * queryLen;
        float[] out = new float[rows * cache.headDim()];
        onDevice(device -> {
            CudaScratch s = device.scratch();
            CacheArgs c = cacheArgs(device, cache, queryHeads, queryLen, causal);
            KernelArgs args = c.args();
            CudaSlice dq = s.upload(Role.QUERY, q);
            CudaSlice dOut = s.poisoned(Role.OUTPUT, 4L * out.length, Sizeof.FLOAT);
            CudaSlice dScores = s.poisoned(Role.LOGITS, 4L * rows * cache.length(), Sizeof.FLOAT);
            CudaSlice dWeights = s.poisoned(Role.WEIGHTS, 4L * rows * cache.length(), Sizeof.FLOAT);
            held(c.bytes() + dq.bytes() + dOut.bytes() + dScores.bytes() + dWeights.bytes());
            dq.into(args);
            dOut.into(args);
            dScores.into(args);
            dWeights.into(args);
            launchAttention("packed_attention_f32", rows, args.f32((float) (1.0 / Math.sqrt(cache.headDim()))), Sizeof.FLOAT);
            s.download(out, dOut);
            return null;
        });
        return out;
    }

    @Override
    public double[] decode(PackedKvCache cache, double[] q, int queryHeads) {
        return decode(cache, q, queryHeads, 0);
    }

    @Override
    public float[] decodeFp32(PackedKvCache cache, float[] q, int queryHeads) {
        return decodeFp32(cache, q, queryHeads, 0);
    }

    /** {@link #decode} with {@code chunkKeys} keys per split-K block (0: automatic), over the cache's device copy. */
    double[] decode(PackedKvCache cache, double[] q, int queryHeads, int chunkKeys) {
        return decodeEach(cache, new double[][] {q}, queryHeads, chunkKeys)[0];
    }

    /**
     * Decode steps for {@code queries}, one after another over one launch setup, as a decode loop runs them: what
     * the kernel leaves on the device after a call (its per-KV-head counters) must not leak into the next.
     */
    double[][] decodeEach(PackedKvCache cache, double[][] queries, int queryHeads, int chunkKeys) {
        for (double[] q : queries) {
            PackedCacheOps.checkAttention(cache, q.length, queryHeads, 1, false);
        }
        return onDevice(device -> {
            try (CudaSplitKDecode d = CudaSplitKDecode.over(backend, residentCopy(device, cache), cache, queryHeads, false, chunkKeys, this::held)) {
                double[][] out = new double[queries.length][];
                for (int i = 0; i < queries.length; i++) {
                    out[i] = d.decode(queries[i]);
                }
                return out;
            }
        });
    }

    float[] decodeFp32(PackedKvCache cache, float[] q, int queryHeads, int chunkKeys) {
        PackedCacheOps.checkAttention(cache, q.length, queryHeads, 1, false);
        return onDevice(device -> {
            try (CudaSplitKDecode d = CudaSplitKDecode.over(backend, residentCopy(device, cache), cache, queryHeads, true, chunkKeys, this::held)) {
                return d.decodeFp32(q);
            }
        });
    }

    /** The split-K kernel reads an fp16-only cache as plain rows of its own, not through a packed copy. */
    private static CudaCacheCopy residentCopy(CudaCacheCopies device, PackedKvCache cache) {
        return cache.groups().isEmpty() ? null : device.copyOf(cache);
    }

    /**
     * One call's work on the device, under the backend's lock; if it fails, everything kept on the device is dropped,
     * since a fault may have ended the context.
     */
    private <T> T onDevice(Function<CudaCacheCopies, T> call) {
        synchronized (backend) {
            CudaCacheCopies device = CudaCacheCopies.of(backend);
            try {
                return call.apply(device);
            } catch (RuntimeException | Error e) {
                device.drop(e);
                throw e;
            }
        }
    }

    /** The packed kernels' first eleven arguments and the device bytes they take. */
    private record CacheArgs(KernelArgs args, long bytes) {
    }

    /** The cache's device copy (kept across calls) around this call's residual and dims. */
    private static CacheArgs cacheArgs(CudaCacheCopies device, PackedKvCache cache, int queryHeads, int queryLen, boolean causal) {
        CudaCacheCopy copy = device.copyOf(cache);
        CudaScratch s = device.scratch();
        CudaSlice resK = s.upload(Role.RESIDUAL_KEYS, cache.residualKeys());
        CudaSlice resV = s.upload(Role.RESIDUAL_VALUES, cache.residualValues());
        CudaSlice dims = s.upload(Role.DIMS, dims(cache, queryHeads, queryLen, causal));
        return new CacheArgs(copy.args(resK, resV, dims), copy.bytes() + resK.bytes() + resV.bytes() + dims.bytes());
    }

    /** The kernels' dims (packed_cache.cuh): 0 Hq, 1 Hkv, 2 Tq, 3 keyLen, 4 d, 5 causal, 6 sinkLen, 7 groups, 8 G, 9 value bits, 10 value group. */
    static int[] dims(PackedKvCache cache, int queryHeads, int queryLen, boolean causal) {
        return new int[] {queryHeads, cache.kvHeads(), queryLen, cache.length(), cache.headDim(), causal ? 1 : 0,
                cache.sinkTokens(), cache.groups().size(), cache.groupTokens(), cache.valueBits(), cache.valueGroupChannels()};
    }

    private void launchAttention(String kernel, int rows, KernelArgs args, int elementBytes) {
        backend.launch(MODULE, kernel, rows, THREADS, THREADS * elementBytes, args);
    }

    private void launch(String kernel, int threads, KernelArgs args) {
        if (threads == 0) {
            return;
        }
        backend.launch(MODULE, kernel, (threads + THREADS - 1) / THREADS, THREADS, 0, args);
    }

    private static int means(OneBitLevels oneBit) {
        return oneBit == OneBitLevels.CONDITIONAL_MEANS ? 1 : 0;
    }

    /** The CPU twin rejects a group whose scale or zero overflows fp16; so does this one, after the fact. */
    private static PackedBlock finiteLevels(PackedBlock block) {
        for (int g = 0; g < block.meta().length / 4; g++) {
            if (Double.isInfinite(block.scale(g)) || Double.isInfinite(block.zero(g))) {
                throw new IllegalArgumentException("group " + g + " scale or zero overflows fp16: the group's range is too wide");
            }
        }
        return block;
    }

    private CacheBuffers buffers() {
        return new CacheBuffers(backend, this::held);
    }

    private void held(long bytes) {
        peakWorkingBytes = Math.max(peakWorkingBytes, bytes);
    }
}
