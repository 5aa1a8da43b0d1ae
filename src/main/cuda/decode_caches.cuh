// The caches as the split-K decode kernels read them (pnmix_decode.cu): a window's place in the packed cache (Segment),
// fp16 rows a lane's 8 channels at a time (fp16_slice), and the two kinds of cache decode_chunk walks: PackedRows (sink,
// quantized groups, residual) and Fp16Rows. Shared with pnmix_decode.cu only; edit it and the SASS fixture must be
// regenerated (sass-counts.py).
#pragma once
#include "decode_state.cuh"

__device__ __forceinline__ float half_at(const unsigned char* p) {
    return __half2float(__ushort_as_half(load_half(p)));
}

// Sixteen bytes read as one 128-bit load (ld.global.v4.u32 on a GPU). The address must be 16-byte aligned: fp16 rows
// are when the row's channel count and the head dim are multiples of 8 (cuMemAlloc's buffers start aligned). A plain
// struct, so the emulator checks one 16-byte access.
struct __align__(16) Words4 {
    unsigned int w[4];
};

// Where a window is in the packed cache: the sink (g = -1), quantized group g (0 <= g < groups) or the residual
// (g = groups), and where that segment ends. Worked out once per block by division, then advanced.
struct Segment {
    int g, start, end;
};

// A lane's 8 channels of one fp16 row (token row of [token][channels] at src, KV head kvh) as raw fp16 bits: one
// 16-byte load, or eight 2-byte ones when rows are not 16-byte aligned; converted only where they are used.
__device__ __forceinline__ Words4 fp16_slice(const unsigned char* __restrict__ src, int channels, long row, int kvh, int d,
                                             const Lanes& a) {
    Words4 x = {};
    int c0 = VEC * a.r;
    if (a.vec) {
        if (c0 < d) x = reinterpret_cast<const Words4*>(src)[row * (channels >> 3) + ((kvh * d) >> 3) + a.r];
        return x;
    }
    const unsigned char* p = src + 2 * (row * channels + (long) kvh * d);
#pragma unroll
    for (int k = 0; k < VEC; k++) {
        // fp16 zero past the head dim; the two bytes read here, not by load_half, so that sass-counts.py finds these
        // loads on this (cold) path's lines
        unsigned int h = c0 + k < d ? (unsigned int) (p[2 * (c0 + k)] | (p[2 * (c0 + k) + 1] << 8)) : 0u;
        x.w[k >> 1] |= h << (16 * (k & 1));
    }
    return x;
}

template <typename T>
__device__ __forceinline__ void widen(const Words4& x, T* out) {
#pragma unroll
    for (int k = 0; k < 4; k++) {
        out[2 * k] = (T) half_lo(x.w[k]);
        out[2 * k + 1] = (T) half_hi(x.w[k]);
    }
}

// The packed cache (layout: packed_cache.cuh), dequantized in T as it is read.
struct PackedRows {
    static constexpr bool GROUPS = true;   // quantized groups: the fp32 kernel scores their keys on tensor cores
    Cache K;
    // Its rows (sink, residual) are a few dozen keys of a chunk: reading the query slice there per key, not per
    // window, keeps the kernel within 128 registers without spills (ptxas, sm_90).
    static constexpr bool QUERY_PER_KEY = true;

    __device__ int residual_start() const { return K.sinkLen + K.groups * K.G; }

    // The segment index of key j (-1 sink, a group, groups for the residual): the one division, in the prologue.
    __device__ int segment_index(int j) const {
        if (j < K.sinkLen) return -1;
        if (j >= residual_start()) return K.groups;
        return (j - K.sinkLen) / K.G;
    }

    __device__ Segment segment_at(int g) const {
        if (g < 0) return Segment{-1, 0, K.sinkLen};
        if (g >= K.groups) return Segment{K.groups, residual_start(), 0x7fffffff};
        return Segment{g, K.sinkLen + g * K.G, K.sinkLen + (g + 1) * K.G};
    }

    // The first token at or after j where a pair of a group's blocks starts (64 tokens on from the group's start, or
    // the group's end; j itself in the sink and the residual): where a warp's stretch may start (group_pair_window).
    // By division: the prologue's.
    __device__ int pair_start(int j) const {
        if (j <= K.sinkLen || j >= residual_start()) return j;
        int gs = K.sinkLen + (j - K.sinkLen) / K.G * K.G;
        int p = gs + ((j - gs + 63) & ~63);
        return p < gs + K.G ? p : gs + K.G;
    }

    // The segment after s (no division: the next group, or the residual after the last).
    __device__ Segment next(const Segment& s) const {
        int g = s.g + 1;
        if (g >= K.groups) return Segment{K.groups, residual_start(), 0x7fffffff};
        return Segment{g, s.end, s.end + K.G};
    }

    __device__ bool rows(const Segment& s) const { return s.g < 0 || s.g >= K.groups; }

    __device__ __forceinline__ Words4 key_row(const Segment& s, int j, int kvh, int d, const Lanes& a) const {
        return fp16_slice(s.g < 0 ? K.sinkK : K.resK, K.Hkv * K.d, j - s.start, kvh, d, a);
    }

    __device__ __forceinline__ Words4 value_row(const Segment& s, int j, int kvh, int d, const Lanes& a) const {
        return fp16_slice(s.g < 0 ? K.sinkV : K.resV, K.Hkv * K.d, j - s.start, kvh, d, a);
    }

    // Otherwise one code a channel (get_code), added to acc as it comes (p: the key's weights after st.rescale);
    // the value group advanced by counting as the channel crosses it.
    template <typename T, int HB>
    __device__ __forceinline__ void value_codes(Online<T, HB>& st, const T* p, const Segment& s, int j, int d,
                                                const Lanes& a) const {
        long token = (long) s.g * K.G + (j - s.start);
        int vgi = a.vg, index = a.vgIndex;
#pragma unroll 1
        for (int k = 0; k < VEC; k++) {
            if (VEC * a.r + k < d) {
                long vg = token * K.vgroups + vgi;
                int code = get_code(K.valueCodes + vg * K.vgBytes, index, K.valueBits);
                const unsigned char* m = K.valueMeta + 4 * vg;
                st.accumulate(p, k, (T) half_at(m + 2) + (T) code * (T) half_at(m));
            }
            if (++index == K.gc) {
                index = 0;
                vgi++;
            }
        }
    }
};

// An fp16 cache: keys and values [token][kvHead][headDim], little-endian halves; one segment.
struct Fp16Rows {
    static constexpr bool QUERY_PER_KEY = false;   // every key is a row: the query slice stays in registers
    static constexpr bool GROUPS = false;
    const unsigned char* k;
    const unsigned char* v;
    int channels;
    __device__ int segment_index(int) const { return 0; }
    __device__ Segment segment_at(int) const { return Segment{0, 0, 0x7fffffff}; }
    __device__ Segment next(const Segment& s) const { return s; }
    __device__ bool rows(const Segment&) const { return true; }
    __device__ __forceinline__ Words4 key_row(const Segment&, int j, int kvh, int d, const Lanes& a) const {
        return fp16_slice(k, channels, j, kvh, d, a);
    }
    __device__ __forceinline__ Words4 value_row(const Segment&, int j, int kvh, int d, const Lanes& a) const {
        return fp16_slice(v, channels, j, kvh, d, a);
    }
    // For rows_pair_window: row j's KV head kvh in K or V, and the bytes of a row.
    __device__ __forceinline__ const unsigned char* key_rows(const Segment&, int j, int kvh, int d) const {
        return k + 2 * ((long) j * channels + kvh * d);
    }
    __device__ __forceinline__ const unsigned char* value_rows(const Segment&, int j, int kvh, int d) const {
        return v + 2 * ((long) j * channels + kvh * d);
    }
    __device__ __forceinline__ long row_bytes() const { return 2L * channels; }
};
