package org.mechspec.pnmix;

import org.mechspec.compute.Backend;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.worker.WorkerBackend;

/**
 * Group quantization with bit packing and attention over a packed KV cache: the operations of a
 * mixed-precision cache. {@link CpuPackedCacheOps} is the deterministic definition; {@link CudaPackedCacheOps}
 * runs the same semantics in {@code src/main/cuda/pnmix.cu} (bit-identical codes and metadata; attention under
 * the FlashAttention tolerance rule). Layouts: {@link org.mechspec.compute.BitPacking}, {@link PackedBlock}, {@link PackedKvCache};
 * code and value arrays are [tokens][channels] row-major.
 */
public interface PackedCacheOps {
    /** The backend's name, "cpu" or "cuda" (the CUDA twin, on a GPU or on the emulated driver), or an implementation's id. */
    String name();

    /** Per-channel streams: channel c's {@code tokens} codes of {@code bits[c]} bits each. */
    byte[] packPerChannel(int[] codes, int tokens, int[] bits);

    int[] unpackPerChannel(byte[] packed, int tokens, int[] bits);

    /** Per-token streams: each token's channels in groups of {@code groupChannels}, {@code bits} bits. */
    byte[] packPerToken(int[] codes, int tokens, int channels, int groupChannels, int bits);

    int[] unpackPerToken(byte[] packed, int tokens, int channels, int groupChannels, int bits);

    /** Keys: one group per channel over all {@code tokens}, channel c with {@code bits[c]} bits. */
    PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit);

    /** Values: one group per (token, run of {@code groupChannels} channels). */
    PackedBlock quantizePerToken(double[] x, int tokens, int channels, int groupChannels, int bits, OneBitLevels oneBit);

    double[] dequantizePerChannel(PackedBlock block, int tokens, int[] bits);

    double[] dequantizePerToken(PackedBlock block, int tokens, int channels, int groupChannels, int bits);

    /**
     * fp64 attention of {@code q} [queryHeads][queryLen][headDim] over the packed cache, reading codes
     * directly (no dequantized copy of the cache). Scale 1/√headDim. Causal: the queries are the cache's last
     * {@code queryLen} positions and query i sees keys ≤ i + (length − queryLen).
     */
    PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal, boolean withLogits);

    /** The same in fp32 arithmetic (dequantized levels, dot products, softmax and sums in float). */
    float[] attendFp32(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal);

    /**
     * One decode step: {@code q} [queryHeads][headDim] is the query of the cache's last position, which sees every
     * cached key; returns [queryHeads][headDim]. The same value as {@link #attend} with one query, not causal; CUDA
     * computes it by split-K ({@code pnmix_decode.cu}), which has no bound on the cache length but device memory.
     */
    double[] decode(PackedKvCache cache, double[] q, int queryHeads);

    /** {@link #decode} in fp32 arithmetic, as {@link #attendFp32}. */
    float[] decodeFp32(PackedKvCache cache, float[] q, int queryHeads);

    /** The most bytes one call of these operations has held in working buffers so far (device memory on CUDA). */
    long peakWorkingBytes();

    /** The implementation for a backend, chosen by {@link Backend#name()}; an outside implementation's where it serves. */
    static PackedCacheOps forBackend(Backend backend) {
        if (backend instanceof WorkerBackend w) {
            return new WorkerPackedCacheOps(w.implementation());
        }
        return switch (backend.name()) {
            case "cpu" -> new CpuPackedCacheOps();
            // A stand-in for a missing device gets CudaBackend.get()'s one-line reason.
            case "cuda", "cuda-emulated" -> new CudaPackedCacheOps(backend instanceof CudaBackend cuda ? cuda : CudaBackend.get());
            default -> throw new IllegalArgumentException("no packed-cache operations for backend '" + backend.name() + "'");
        };
    }

    /** Shared argument checks, so both twins reject the same bad input with the same words; the cache in mechspec's layout. */
    static void checkAttention(PackedKvCache cache, int qLength, int queryHeads, int queryLen, boolean causal) {
        checkAttentionArguments(cache, qLength, queryHeads, queryLen, causal);
        cache.requireMechspecLayout();
    }

    /** The argument checks of {@link #checkAttention} without the layout, for an implementation with its own. */
    static void checkAttentionArguments(PackedKvCache cache, int qLength, int queryHeads, int queryLen, boolean causal) {
        if (queryHeads <= 0 || queryHeads % cache.kvHeads() != 0) {
            throw new IllegalArgumentException("queryHeads (" + queryHeads + ") must be a positive multiple of kvHeads ("
                    + cache.kvHeads() + ")");
        }
        if (queryLen <= 0 || cache.length() == 0) {
            throw new IllegalArgumentException("attention needs queries and keys, got " + queryLen + " queries over "
                    + cache.length() + " cached tokens");
        }
        if (causal && queryLen > cache.length()) {
            throw new IllegalArgumentException("causal attention needs keyLen (" + cache.length() + ") >= queryLen (" + queryLen + ")");
        }
        long expected = (long) queryHeads * queryLen * cache.headDim();
        if (qLength != expected) {
            throw new IllegalArgumentException("q has " + qLength + " elements, shape needs " + expected);
        }
    }

    static void checkCodes(int[] codes, long expected, int[] bitsPerChannel, int channels) {
        if (codes.length != expected) {
            throw new IllegalArgumentException("codes have " + codes.length + " elements, shape needs " + expected);
        }
        for (int i = 0; i < codes.length; i++) {
            int b = bitsPerChannel[i % channels];
            if (codes[i] < 0 || codes[i] >= (1 << b)) {
                throw new IllegalArgumentException("codes[" + i + "] = " + codes[i] + " does not fit in " + b + " bits");
            }
        }
    }
}
