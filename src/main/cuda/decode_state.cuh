// The split-K decode kernels' running state (pnmix_decode.cu): where a lane is in its warp (Lanes, worked out once in
// the prologue), a team's online softmax and the lane's share of the weighted sum (Online), and, in the fp32 packed
// kernels' quantized groups, that state in value_tiles' layout (tile_state, untile_state). Shared with pnmix_decode.cu
// only; edit it and the SASS fixture must be regenerated (sass-counts.py).
#pragma once
#include "group_tiles.cuh"

#define VEC 8            // channels a lane owns: one 16-byte load of fp16

// A lane's fixed place, worked out once in the prologue (every division of the kernel is here).
struct Lanes {
    int lane, warp;
    int R;            // lanes per key: d/8 rounded up to a power of two (at most 32)
    int P;            // keys a warp holds at once, 32 / R
    int team, r;      // the lane's key among the warp's P and its slice: channels [8r, 8r + 8)
    bool vec;         // fp16 rows read 16 bytes at a time
    // Packed values: the value group of the lane's first channel and that channel's index in it; wordPath when the
    // lane's 8 codes are one aligned 32-bit word (wordByte: its byte in the value group's codes).
    int vg, vgIndex, wordByte;
    bool wordPath;
    bool keyTiles;     // the fp32 packed kernel scores a quantized group's keys on tensor cores (d even)
    bool rowTiles;     // the fp32 fp16-cache kernel takes its rows' keys and values on tensor cores (row_tiles_fit)
};

// Four consecutive elements of shared memory at a 16-byte boundary, as vector loads.
__device__ __forceinline__ void load4(const float* p, float* x) {
    float4 v = *reinterpret_cast<const float4*>(p);
    x[0] = v.x, x[1] = v.y, x[2] = v.z, x[3] = v.w;
}

__device__ __forceinline__ void load4(const double* p, double* x) {
    double2 u = reinterpret_cast<const double2*>(p)[0], v = reinterpret_cast<const double2*>(p)[1];
    x[0] = u.x, x[1] = u.y, x[2] = v.x, x[3] = v.y;
}

// The running softmax of one team (m, l the same in its lanes) and the lane's acc, for HB query heads. In the fp32
// packed kernel's quantized groups it is held in value_tiles' layout instead (tile_state: m the warp's, l and z each
// lane's share of the warp's, acc as value_unscale says).
template <typename T, int HB>
struct Online {
    T m[HB], l[HB], acc[HB][VEC], z[HB];

    __device__ __forceinline__ void clear() {
#pragma unroll
        for (int h = 0; h < HB; h++) {
            m[h] = -INFINITY;
            l[h] = 0;
#pragma unroll
            for (int k = 0; k < VEC; k++) acc[h][k] = 0;
            z[h] = 0;
        }
    }

    // One key: one exp2 a head, for all HB heads (a pass's heads past hb have zero queries; their sums are never
    // written). A larger score rescales what came before (l and acc, only then: once the max has settled that is
    // rare) and weighs 1; a smaller one weighs 2^(s - m).
    __device__ __forceinline__ void add(const T* s, const T* v) {
        T p[HB];
#pragma unroll
        for (int h = 0; h < HB; h++) {
            p[h] = 1;
            if (s[h] > m[h]) {
                T alpha = raise_head(h, s[h]);
#pragma unroll
                for (int k = 0; k < VEC; k++) acc[h][k] *= alpha;
            } else {
                p[h] = exp2_t<T>(s[h] - m[h]);
            }
        }
        weigh(p, v);
    }

    // A window of keys at once (group_window): the team's max becomes at least the window's, wm, whose keys then
    // weigh 2^(s - m) <= 1 each (weigh: the team adds p·v and p itself). Only a larger max rescales l and acc, by
    // 2^(m_old - m) (as in add: once the max has settled that is rare, about ln n of n windows); a team's first
    // window (m = -inf) starts from zero. One test for all heads, not a branch a head: where any head's max rises,
    // every head is rescaled, by exactly 1 (a select, not exp2(0)) where its own stays.
    __device__ __forceinline__ void raise_to(const T* wm) {
        if (rises_to(wm)) {
#pragma unroll
            for (int h = 0; h < HB; h++) {
                T alpha = raise_head(h, wm[h]);
#pragma unroll
                for (int k = 0; k < VEC; k++) acc[h][k] *= alpha;
            }
        }
    }

    // raise_to in value_tiles' layout, where a lane's score rose above the warp's m (pair_weights' vote, so some
    // head's max rises: no test of its own): every lane holds the warp's m, its shares of l and z (each head's
    // rescaled by its alpha), and head t's acc (by head t's).
    __device__ __forceinline__ void raise_tiles(const T* wm, int t) {
        T alpha[HB];
#pragma unroll
        for (int h = 0; h < HB; h++) alpha[h] = raise_head(h, wm[h]);
        T at = alpha[0];
#pragma unroll
        for (int h = 1; h < HB; h++) at = t == h ? alpha[h] : at;
#pragma unroll
        for (int h = 0; h < HB; h++) {
#pragma unroll
            for (int k = 0; k < VEC; k++) acc[h][k] *= at;
            z[h] *= alpha[h];
        }
    }

    // Whether any head's max rises to wm.
    __device__ __forceinline__ bool rises_to(const T* wm) const {
        bool rises = false;
#pragma unroll
        for (int h = 0; h < HB; h++) rises = rises || wm[h] > m[h];
        return rises;
    }

    // Head h's max raised to s where s is larger, l rescaled; the factor its sums take: exactly 1 where its max
    // stays, 0 from an empty state (m = -inf), else 2^(m_old - s).
    __device__ __forceinline__ T raise_head(int h, T s) {
        bool up = s > m[h];
        T alpha = !up ? (T) 1 : m[h] == -INFINITY ? (T) 0 : exp2_t<T>(m[h] - s);
        m[h] = up ? s : m[h];
        l[h] *= alpha;
        return alpha;
    }

    __device__ __forceinline__ void weigh(const T* p, const T* v) {
#pragma unroll
        for (int h = 0; h < HB; h++) {
            l[h] += p[h];
#pragma unroll
            for (int k = 0; k < VEC; k++) acc[h][k] += p[h] * v[k];
        }
    }

    // For values that come one channel at a time (the slow path): adds p·v to channel k of acc (l takes p apart).
    __device__ __forceinline__ void accumulate(const T* p, int k, T v) {
#pragma unroll
        for (int h = 0; h < HB; h++) {
#pragma unroll
            for (int i = 0; i < VEC; i++) {
                if (i == k) acc[h][i] += p[h] * v;   // k may vary at run time: acc stays in registers
            }
        }
    }

    // Merges the state of the lane `offset` away (another team, same channels), as every lane of the pair does.
    __device__ __forceinline__ void merge_xor(int offset, int hb) {
#pragma unroll
        for (int h = 0; h < HB; h++) {
            if (h >= hb) break;
            T mo = __shfl_xor_sync(FULL, m[h], offset);
            T lo = __shfl_xor_sync(FULL, l[h], offset);
            T M = mo > m[h] ? mo : m[h];
            T wa = m[h] == -INFINITY ? (T) 0 : exp2_t<T>(m[h] - M);
            T wb = mo == -INFINITY ? (T) 0 : exp2_t<T>(mo - M);
            l[h] = l[h] * wa + lo * wb;
#pragma unroll
            for (int k = 0; k < VEC; k++) {
                T other = __shfl_xor_sync(FULL, acc[h][k], offset);
                acc[h][k] = acc[h][k] * wa + other * wb;
            }
            m[h] = M;
        }
    }
};

// The running state into value_tiles' layout (value_unscale), where a warp goes from rows (or its start) to a quantized
// group's pair windows: the teams merged (every lane then holds the warp's m and l; lane 0 keeps l as its share, the
// others 0), team 0's acc through the warp's sO [head][channel], each lane's head and channels divided by their
// m-tiles' unscale (powers of two: exact), z 0.
template <int HB, int B>
__device__ void tile_state(Online<float, HB>& st, int d, float* sO, const Lanes& a) {
    for (int o = a.R; o < 32; o <<= 1) st.merge_xor(o, HB);
    if (a.team == 0 && VEC * a.r < d) {
#pragma unroll
        for (int h = 0; h < HB; h++) {
            *reinterpret_cast<float4*>(sO + h * d + VEC * a.r) = make_float4(st.acc[h][0], st.acc[h][1], st.acc[h][2], st.acc[h][3]);
            *reinterpret_cast<float4*>(sO + h * d + VEC * a.r + 4) = make_float4(st.acc[h][4], st.acc[h][5], st.acc[h][6], st.acc[h][7]);
        }
    }
    __syncwarp();
    const float* row = sO + (a.lane & 3) * d + (a.lane >> 2) * (d >> 3);   // head t's run g
    float* acc = &st.acc[0][0];
#pragma unroll
    for (int m = 0; m < 8; m++) {
        bool held = 16 * m < d;
        acc[4 * m] = held ? row[2 * m] * (1.0f / value_unscale<B>(m, 0)) : 0.0f;
        acc[4 * m + 1] = 0.0f;
        acc[4 * m + 2] = held ? row[2 * m + 1] * (1.0f / value_unscale<B>(m, 1)) : 0.0f;
        acc[4 * m + 3] = 0.0f;
    }
#pragma unroll
    for (int h = 0; h < HB; h++) {
        st.l[h] = a.lane == 0 ? st.l[h] : 0.0f;
        st.z[h] = 0;
    }
    __syncwarp();   // every lane's reads of sO before it is written again
}

// Back from value_tiles' layout, where a warp goes from a group's pair windows to rows, and at the end of its stretch:
// the lanes' shares of l and z summed over the warp (one reduce-scatter), each lane's channels of its head, (hi +
// lo·2^-11)·unscale + z, through sO into team 0's acc, and l into team 0's; the other teams' acc and l 0, so the
// teams' merge counts the window sums once.
template <int HB, int B>
__device__ void untile_state(Online<float, HB>& st, int d, float* sO, const Lanes& a) {
    float sums[2 * HB];
#pragma unroll
    for (int h = 0; h < HB; h++) {
        sums[h] = st.l[h];
        sums[HB + h] = st.z[h];
    }
    warp_sum_each<2 * HB>(sums, a.lane);
    int t = a.lane & 3;   // head t: selects, not an index at run time (local memory)
    float z = sums[HB];
#pragma unroll
    for (int h = 1; h < HB; h++) z = t == h ? sums[HB + h] : z;
    float* row = sO + t * d + (a.lane >> 2) * (d >> 3);   // head t's run g
    const float* acc = &st.acc[0][0];
#pragma unroll
    for (int m = 0; m < 8; m++) {
        if (16 * m < d) {
            *reinterpret_cast<float2*>(row + 2 * m) =
                    make_float2((acc[4 * m] + acc[4 * m + 1] * (1.0f / 2048.0f)) * value_unscale<B>(m, 0) + z,
                                (acc[4 * m + 2] + acc[4 * m + 3] * (1.0f / 2048.0f)) * value_unscale<B>(m, 1) + z);
        }
    }
    __syncwarp();
    bool takes = a.team == 0 && VEC * a.r < d;
#pragma unroll
    for (int h = 0; h < HB; h++) {
        float o[VEC] = {};
        if (takes) {
            load4(sO + h * d + VEC * a.r, o);
            load4(sO + h * d + VEC * a.r + 4, o + 4);
        }
#pragma unroll
        for (int k = 0; k < VEC; k++) st.acc[h][k] = o[k];
        st.l[h] = a.team == 0 ? sums[h] : 0.0f;
        st.z[h] = 0;
    }
    __syncwarp();   // every lane's reads of sO before it is written again
}
