package org.mechspec.pnmix;

import java.util.List;
import jcuda.driver.CUdeviceptr;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.KernelArgs;

/**
 * The device copy of the parts of a packed cache that stay the same while the cache grows: the fp16 sink and every
 * quantized group (key codes, scales and zeros, bit widths and stream offsets; value codes, scales and zeros), in
 * the layout of {@code packed_cache.cuh}. The fp16 residual changes with every appended token and is not part of it.
 *
 * <p>A copy {@link #holds} a cache whose sink arrays and group objects are the very objects it was made from (empty
 * arrays count as the same). That is enough because nothing writes a cache's arrays after making them:
 * {@link StreamingCache} replaces its sink and residual arrays and adds new group objects, it never writes old ones.
 */
final class CudaCacheCopy implements AutoCloseable {
    private final byte[] sinkKeys;
    private final byte[] sinkValues;
    private final List<PackedKvCache.Group> groups;
    private final int kvHeads;
    private final int headDim;
    private final int groupTokens;
    private final int valueBits;
    private final int valueGroupChannels;
    private final CacheBuffers buffers;
    /** sinkK, sinkV, keyCodes, keyMeta, keyBits, keyOffsets, valueCodes, valueMeta. */
    private final CUdeviceptr[] pointers;
    private final long bytes;

    private CudaCacheCopy(PackedKvCache cache, CacheBuffers buffers, CUdeviceptr[] pointers, long bytes) {
        this.sinkKeys = cache.sinkKeys();
        this.sinkValues = cache.sinkValues();
        this.groups = cache.groups();
        this.kvHeads = cache.kvHeads();
        this.headDim = cache.headDim();
        this.groupTokens = cache.groupTokens();
        this.valueBits = cache.valueBits();
        this.valueGroupChannels = cache.valueGroupChannels();
        this.buffers = buffers;
        this.pointers = pointers;
        this.bytes = bytes;
    }

    /** Uploads the sink and the groups of {@code cache} (mechspec's layout, checked by the caller). */
    static CudaCacheCopy upload(CudaBackend cuda, PackedKvCache cache) {
        long[] total = {0};
        CacheBuffers b = new CacheBuffers(cuda, held -> total[0] = held);
        boolean done = false;
        try {
            GroupArrays g = GroupArrays.of(cache);
            CUdeviceptr[] p = {b.upload(cache.sinkKeys()), b.upload(cache.sinkValues()), b.upload(g.keyCodes), b.upload(g.keyMeta),
                    b.upload(g.keyBits), b.upload(g.keyOffsets), b.upload(g.valueCodes), b.upload(g.valueMeta)};
            CudaCacheCopy copy = new CudaCacheCopy(cache, b, p, total[0]);
            done = true;
            return copy;
        } finally {
            if (!done) {
                b.close();
            }
        }
    }

    /** Whether this copy holds the sink and the groups of {@code cache}. */
    boolean holds(PackedKvCache cache) {
        if (cache.kvHeads() != kvHeads || cache.headDim() != headDim || cache.groupTokens() != groupTokens
                || cache.valueBits() != valueBits || cache.valueGroupChannels() != valueGroupChannels
                || !same(cache.sinkKeys(), sinkKeys) || !same(cache.sinkValues(), sinkValues) || cache.groups().size() != groups.size()) {
            return false;
        }
        for (int i = 0; i < groups.size(); i++) {
            if (cache.groups().get(i) != groups.get(i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean same(byte[] a, byte[] b) {
        return a == b || (a.length == 0 && b.length == 0);
    }

    /** Device bytes held, each buffer at least one byte (as {@link CacheBuffers} counts them). */
    long bytes() {
        return bytes;
    }

    /** False once a sticky fault made CUDA unusable: the copy must then be dropped, never used. */
    boolean live() {
        return buffers.live();
    }

    /**
     * The packed kernels' first eleven arguments (packed_cache.cuh's order): this copy's sink and groups around the
     * residual and dims given.
     */
    KernelArgs args(CudaSlice residualKeys, CudaSlice residualValues, CudaSlice dims) {
        KernelArgs a = new KernelArgs().ptr(pointers[0]).ptr(pointers[1]);
        residualKeys.into(a);
        residualValues.into(a);
        for (int i = 2; i < pointers.length; i++) {
            a.ptr(pointers[i]);
        }
        dims.into(a);
        return a;
    }

    @Override
    public void close() {
        buffers.close();
    }

    /**
     * Start of each key-code stream of one group in the device copy, relative to the group's first stream
     * ({@code [channels + 1]}, the last entry the group's bytes): each channel's stream of {@link BitPacking} starts
     * on a 16-byte boundary and is padded with zero bytes to a multiple of 16, so the decode kernel reads it with
     * 16-byte loads (pnmix_decode.cu). A re-layout of the device copy only: the cache's own byte layout and byte
     * accounting are unchanged, and where every stream is already a multiple of 16 bytes (groups of a multiple of
     * 128 tokens, as pn-mix's) the copy is byte for byte the cache's layout.
     */
    static int[] paddedKeyOffsets(int tokens, int[] bits) {
        int[] off = new int[bits.length + 1];
        for (int c = 0; c < bits.length; c++) {
            off[c + 1] = off[c] + padded16(BitPacking.channelOffsets(tokens, new int[] {bits[c]})[1]);
        }
        return off;
    }

    /**
     * Zero bytes after the last key stream: the decode kernel reads, for each code, the word that holds its first bit
     * and the next one, whether or not the code runs into it (no conditional load), so a read may pass a stream's
     * end by one word.
     */
    static final int KEY_CODE_TAIL = 16;

    /**
     * Zero entries after the last of keyBits and keyOffsets: the fp32 decode kernel reads 16 channels a step, past a
     * head's last channel where its head dim is not a multiple of 16 (those codes weigh 0), without a test a channel.
     */
    static final int CHANNEL_TAIL = 16;

    private static int padded16(int bytes) {
        return (bytes + 15) & ~15;
    }

    /** The groups of a cache as the kernels read them: one array per field, group after group. */
    private record GroupArrays(byte[] keyCodes, byte[] keyMeta, int[] keyBits, int[] keyOffsets, byte[] valueCodes, byte[] valueMeta) {
        static GroupArrays of(PackedKvCache cache) {
            int channels = cache.channels();
            int groups = cache.groups().size();
            int keyCodeBytes = 0;
            for (PackedKvCache.Group g : cache.groups()) {
                keyCodeBytes += paddedKeyOffsets(cache.groupTokens(), g.keyBits())[channels];
            }
            keyCodeBytes += KEY_CODE_TAIL;
            int valueCodeBytes = groups == 0 ? 0 : cache.groups().get(0).values().codes().length;
            int valueMetaBytes = groups == 0 ? 0 : cache.groups().get(0).values().meta().length;
            GroupArrays a = new GroupArrays(new byte[keyCodeBytes], new byte[4 * channels * groups],
                    new int[channels * groups + CHANNEL_TAIL], new int[channels * groups + CHANNEL_TAIL],
                    new byte[valueCodeBytes * groups], new byte[valueMetaBytes * groups]);
            int start = 0;
            for (int g = 0; g < groups; g++) {
                PackedKvCache.Group gr = cache.groups().get(g);
                int[] off = BitPacking.channelOffsets(cache.groupTokens(), gr.keyBits());
                int[] padded = paddedKeyOffsets(cache.groupTokens(), gr.keyBits());
                for (int c = 0; c < channels; c++) {
                    System.arraycopy(gr.keys().codes(), off[c], a.keyCodes, start + padded[c], off[c + 1] - off[c]);
                    a.keyOffsets[channels * g + c] = start + padded[c];
                }
                System.arraycopy(gr.keys().meta(), 0, a.keyMeta, 4 * channels * g, 4 * channels);
                System.arraycopy(gr.keyBits(), 0, a.keyBits, channels * g, channels);
                start += padded[channels];
                System.arraycopy(gr.values().codes(), 0, a.valueCodes, valueCodeBytes * g, valueCodeBytes);
                System.arraycopy(gr.values().meta(), 0, a.valueMeta, valueMetaBytes * g, valueMetaBytes);
            }
            return a;
        }
    }
}
