package org.mechspec.pnmix;

import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;

import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.Finite;
import org.mechspec.compute.KernelArgs;
import org.mechspec.compute.OneBitLevels;

/**
 * {@link PackedCacheOps} on CUDA: the kernels of {@code src/main/cuda/pnmix.cu}. Every output buffer is poisoned
 * (0xFF bytes: NaN for floats, −1 for int codes) before a launch, so an element a kernel forgot to write shows up
 * in the differential contracts. All device buffers of a call are freed when it returns, so the largest single
 * call's allocation is the device peak of a run.
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
        try (CacheBuffers b = buffers()) {
            KernelArgs args = uploadCache(b, cache, queryHeads, queryLen, causal);
            CUdeviceptr dq = b.upload(q);
            CUdeviceptr dOut = b.poisoned(8L * out.length);
            CUdeviceptr dScores = b.poisoned(8L * logits.length);
            launchAttention("packed_attention_f64", rows,
                    args.ptr(dq).ptr(dOut).ptr(dScores).f64(1.0 / Math.sqrt(cache.headDim())), Sizeof.DOUBLE);
            b.download(out, dOut);
            if (withLogits) {
                b.download(logits, dScores);
            }
        }
        return new PackedAttention(out, withLogits ? logits : null);
    }

    @Override
    public float[] attendFp32(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal) {
        PackedCacheOps.checkAttention(cache, q.length, queryHeads, queryLen, causal);
        Finite.require("q", q);
        int rows = queryHeads * queryLen;
        float[] out = new float[rows * cache.headDim()];
        try (CacheBuffers b = buffers()) {
            KernelArgs args = uploadCache(b, cache, queryHeads, queryLen, causal);
            CUdeviceptr dq = b.upload(q);
            CUdeviceptr dOut = b.poisoned(4L * out.length);
            CUdeviceptr dScores = b.poisoned(4L * rows * cache.length());
            launchAttention("packed_attention_f32", rows,
                    args.ptr(dq).ptr(dOut).ptr(dScores).f32((float) (1.0 / Math.sqrt(cache.headDim()))), Sizeof.FLOAT);
            b.download(out, dOut);
        }
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

    /** {@link #decode} with {@code chunkKeys} keys per split-K block (0: automatic). */
    double[] decode(PackedKvCache cache, double[] q, int queryHeads, int chunkKeys) {
        PackedCacheOps.checkAttention(cache, q.length, queryHeads, 1, false);
        try (CudaSplitKDecode d = CudaSplitKDecode.upload(backend, cache, queryHeads, false, chunkKeys, this::held)) {
            return d.decode(q);
        }
    }

    float[] decodeFp32(PackedKvCache cache, float[] q, int queryHeads, int chunkKeys) {
        PackedCacheOps.checkAttention(cache, q.length, queryHeads, 1, false);
        try (CudaSplitKDecode d = CudaSplitKDecode.upload(backend, cache, queryHeads, true, chunkKeys, this::held)) {
            return d.decodeFp32(q);
        }
    }

    /** Uploads the cache's buffers; returns the kernel's first 11 arguments (through dims). */
    static KernelArgs uploadCache(CacheBuffers b, PackedKvCache cache, int queryHeads, int queryLen, boolean causal) {
        int channels = cache.channels();
        int groups = cache.groups().size();
        int keyCodeBytes = 0;
        for (PackedKvCache.Group g : cache.groups()) {
            keyCodeBytes += g.keys().codes().length;
        }
        byte[] keyCodes = new byte[keyCodeBytes];
        byte[] keyMeta = new byte[4 * channels * groups];
        int[] keyBits = new int[channels * groups];
        int[] keyOffsets = new int[channels * groups];
        int valueCodeBytes = groups == 0 ? 0 : cache.groups().get(0).values().codes().length;
        int valueMetaBytes = groups == 0 ? 0 : cache.groups().get(0).values().meta().length;
        byte[] valueCodes = new byte[valueCodeBytes * groups];
        byte[] valueMeta = new byte[valueMetaBytes * groups];
        int start = 0;
        for (int g = 0; g < groups; g++) {
            PackedKvCache.Group gr = cache.groups().get(g);
            int[] off = BitPacking.channelOffsets(cache.groupTokens(), gr.keyBits());
            System.arraycopy(gr.keys().codes(), 0, keyCodes, start, gr.keys().codes().length);
            System.arraycopy(gr.keys().meta(), 0, keyMeta, 4 * channels * g, 4 * channels);
            System.arraycopy(gr.keyBits(), 0, keyBits, channels * g, channels);
            for (int c = 0; c < channels; c++) {
                keyOffsets[channels * g + c] = start + off[c];
            }
            start += gr.keys().codes().length;
            System.arraycopy(gr.values().codes(), 0, valueCodes, valueCodeBytes * g, valueCodeBytes);
            System.arraycopy(gr.values().meta(), 0, valueMeta, valueMetaBytes * g, valueMetaBytes);
        }
        int[] dims = {queryHeads, cache.kvHeads(), queryLen, cache.length(), cache.headDim(), causal ? 1 : 0,
                cache.sinkTokens(), groups, cache.groupTokens(), cache.valueBits(), cache.valueGroupChannels()};
        CUdeviceptr[] p = {
                b.upload(cache.sinkKeys()), b.upload(cache.sinkValues()), b.upload(cache.residualKeys()),
                b.upload(cache.residualValues()), b.upload(keyCodes), b.upload(keyMeta), b.upload(keyBits),
                b.upload(keyOffsets), b.upload(valueCodes), b.upload(valueMeta), b.upload(dims)};
        KernelArgs args = new KernelArgs();
        for (CUdeviceptr d : p) {
            args.ptr(d);
        }
        return args;
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
