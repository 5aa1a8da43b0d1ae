// Warp-level matrix multiply-accumulate, the byte permute and the funnel shift, for kernels that use them through
// src/main/cuda/warp_ops.cuh (which calls these on the emulator and the PTX instructions on a GPU). Included by
// cuda_emu.h, after emu_warp.h.
#pragma once
#include <stdint.h>
#include <string.h>

#include "emu_float16.h"

// __byte_perm(x, y, s), PTX prmt.b32 in its default mode: the eight bytes of y:x (x the low four), byte i of the
// result is the byte selected by nibble i of s (its low 3 bits; nibbles 4-7 of s are ignored) -- CUDA's
// documented semantics.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
    uint64_t bytes = (uint64_t) y << 32 | x;
    unsigned r = 0;
    for (int i = 0; i < 4; i++) {
        unsigned sel = (s >> (4 * i)) & 7u;
        r |= (unsigned) ((bytes >> (8 * sel)) & 0xffu) << (8 * i);
    }
    return r;
}

// __funnelshift_r(lo, hi, shift), PTX shf.r.wrap.b32: the 64-bit hi:lo shifted right by shift & 31, its low 32 bits --
// CUDA's documented semantics (the wrapping form; __funnelshift_rc clamps instead and is not modelled).
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
    return (unsigned) (((uint64_t) hi << 32 | lo) >> (shift & 31u));
}

// mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32, a warp collective: every lane of a full warp calls it with
// its fragments in PTX's layout (groupID g = lane / 4, t = lane % 4):
//   A (16 x 16, row-major), four .b32 of two halves each, low half first: a[0] = A[g][2t..2t+1],
//     a[1] = A[g + 8][2t..2t+1], a[2] = A[g][2t + 8..2t + 9], a[3] = A[g + 8][2t + 8..2t + 9];
//   B (16 x 8, "col"): b[0] = B[2t..2t+1][g], b[1] = B[2t + 8..2t + 9][g];
//   C, D (16 x 8, fp32): c[0], c[1] = C[g][2t..2t+1], c[2], c[3] = C[g + 8][2t..2t+1].
// D = A·B + C. The products of two halves are exact in fp32; PTX leaves the order and rounding of the sum to the
// hardware, and this model adds them to C one at a time in k order, each sum rounded to fp32. A GPU may round
// differently (by a few fp32 ulps of the sum): kernels are judged against their twins within FlashAttention's rule.
inline float emu_half_bits_to_float(unsigned h) { return (float) emu_fp::to_double<5, 10>(h & 0xffffu); }

inline void emu_mma_m16n8k16_f32_f16_f16_f32(float d[4], const unsigned a[4], const unsigned b[2], const float c[4]) {
    // Every lane's fragments to every lane, at one meeting of the warp (a lane that did not arrive fails as at a
    // shuffle).
    struct Fragments {
        unsigned a[4], b[2];
    } mine = {{a[0], a[1], a[2], a[3]}, {b[0], b[1]}}, all[32];
    emu_warp_gather_bytes(0xffffffffu, &mine, all, (int) sizeof mine);
    // This lane's two rows of A (g, g + 8) and two columns of B (2t, 2t + 1), element k from the lane that holds it.
    int lane = (int) (((emu_threadIdx.z * emu_blockDim.y + emu_threadIdx.y) * emu_blockDim.x + emu_threadIdx.x) & 31);
    int g = lane >> 2;
    int t = lane & 3;
    float A[2][16];
    float B[16][2];
    for (int k = 0; k < 16; k++) {
        int pair = (k & 7) >> 1, shift = 16 * (k & 1), high = k >> 3;
        for (int r = 0; r < 2; r++) A[r][k] = emu_half_bits_to_float(all[4 * g + pair].a[2 * high + r] >> shift);
        for (int j = 0; j < 2; j++) B[k][j] = emu_half_bits_to_float(all[4 * (2 * t + j) + pair].b[high] >> shift);
    }
    for (int i = 0; i < 4; i++) {
        float sum = c[i];
        for (int k = 0; k < 16; k++) {
            float p = emu_unfusable(A[i >> 1][k] * B[k][i & 1]);   // exact: 11-bit by 11-bit significands
            sum = emu_unfusable(sum + p);
        }
        d[i] = sum;
    }
}
