// The packed mixed-precision KV cache as the attention kernels read it (layouts: PackedKvCache, BitPacking):
// fp16 helpers, code reads, and one element of a key or value row at any position. Shared by pnmix.cu and
// pnmix_decode.cu.
#pragma once
#include <cuda_fp16.h>

__device__ __forceinline__ double from_half_bits(unsigned short h) {
    return (double) __half2float(__ushort_as_half(h));
}

// The low and the high half of a 32-bit word (a scale/zero pair) as floats.
__device__ __forceinline__ float half_lo(unsigned int w) { return __half2float(__ushort_as_half((unsigned short) (w & 0xffffu))); }
__device__ __forceinline__ float half_hi(unsigned int w) { return __half2float(__ushort_as_half((unsigned short) (w >> 16))); }

__device__ __forceinline__ unsigned short load_half(const unsigned char* p) {
    return (unsigned short) (p[0] | (p[1] << 8));
}

__device__ __forceinline__ int get_code(const unsigned char* stream, long index, int bits) {
    long bit = index * bits;
    const unsigned char* p = stream + (bit >> 3);
    int shift = (int) (bit & 7);
    unsigned int w = p[0];
    if (shift + bits > 8) w |= ((unsigned int) p[1]) << 8;
    return (int) ((w >> shift) & ((1u << bits) - 1u));
}

__device__ __forceinline__ int stream_bytes(long count, int bits) {
    return (int) ((count * bits + 7) / 8);
}

// dims: 0 Hq, 1 Hkv, 2 Tq, 3 keyLen, 4 d, 5 causal, 6 sinkLen, 7 groups, 8 groupTokens, 9 valueBits,
//       10 valueGroupChannels
struct Cache {
    const unsigned char* sinkK;
    const unsigned char* sinkV;
    const unsigned char* resK;
    const unsigned char* resV;
    const unsigned char* keyCodes;    // all groups, group g's channel c stream at keyOffsets[g*C + c]
    const unsigned char* keyMeta;     // [group][channel][4]
    const int* keyBits;               // [group][channel]
    const int* keyOffsets;            // [group][channel], absolute byte offsets
    const unsigned char* valueCodes;  // [group][token][valueGroup][vgBytes]
    const unsigned char* valueMeta;   // [group][token][valueGroup][4]
    int Hkv, d, sinkLen, groups, G, valueBits, gc, vgroups, vgBytes;
};

template <typename T>
__device__ __forceinline__ T element(const Cache& K, int j, int kvh, int c, bool key) {
    int C = K.Hkv * K.d;
    int ch = kvh * K.d + c;
    int resStart = K.sinkLen + K.groups * K.G;
    if (j < K.sinkLen || j >= resStart) {
        const unsigned char* buf = j < K.sinkLen ? (key ? K.sinkK : K.sinkV) : (key ? K.resK : K.resV);
        long t = j < K.sinkLen ? j : j - resStart;
        return (T) __half2float(__ushort_as_half(load_half(buf + 2 * (t * C + ch))));
    }
    int g = (j - K.sinkLen) / K.G;
    int t = (j - K.sinkLen) % K.G;
    int code;
    const unsigned char* m;
    if (key) {
        long gch = (long) g * C + ch;
        code = get_code(K.keyCodes + K.keyOffsets[gch], t, K.keyBits[gch]);
        m = K.keyMeta + 4 * gch;
    } else {
        long vg = ((long) g * K.G + t) * K.vgroups + ch / K.gc;
        code = get_code(K.valueCodes + vg * K.vgBytes, ch % K.gc, K.valueBits);
        m = K.valueMeta + 4 * vg;
    }
    T zero = (T) __half2float(__ushort_as_half(load_half(m + 2)));
    T scale = (T) __half2float(__ushort_as_half(load_half(m)));
    return zero + (T) code * scale;
}

__device__ inline Cache make_cache(const unsigned char* sinkK, const unsigned char* sinkV, const unsigned char* resK,
                            const unsigned char* resV, const unsigned char* keyCodes, const unsigned char* keyMeta,
                            const int* keyBits, const int* keyOffsets, const unsigned char* valueCodes,
                            const unsigned char* valueMeta, const int* dims) {
    Cache K;
    K.sinkK = sinkK; K.sinkV = sinkV; K.resK = resK; K.resV = resV;
    K.keyCodes = keyCodes; K.keyMeta = keyMeta; K.keyBits = keyBits; K.keyOffsets = keyOffsets;
    K.valueCodes = valueCodes; K.valueMeta = valueMeta;
    K.Hkv = dims[1]; K.d = dims[4]; K.sinkLen = dims[6]; K.groups = dims[7]; K.G = dims[8];
    K.valueBits = dims[9]; K.gc = dims[10];
    K.vgroups = K.groups > 0 ? (K.Hkv * K.d) / K.gc : 0;
    K.vgBytes = K.groups > 0 ? stream_bytes(K.gc, K.valueBits) : 0;
    return K;
}

