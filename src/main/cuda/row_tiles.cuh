// The fp32 fp16-cache decode kernel's rows on tensor cores (pnmix_decode.cu: rows_pair_window): a block of up to 32
// rows' scores (row_tile_scores) and a window's Σ p·v over its one or two blocks (row_value_tiles), by mma.sync
// m16n8k16 as a quantized group's (key_tiles.cuh: the query staged as the weights by stage_row_weights;
// group_tiles.cuh: p's B fragments by window_weights). Shared with pnmix_decode.cu only; edit it and the SASS fixture must be regenerated
// (sass-counts.py).
#pragma once
#include "group_tiles.cuh"

// As a group's, with the rows themselves for the codes: q·k with the query staged as the weights (stage_row_weights:
// hi and lo of q, scaled by a power of two; zsum 0) and fp16 K exact in A; Σ p·v with fp16 V exact in
// A and p as hi and lo in B (window_weights with scale 1; no zero sum). Where d is a multiple of 16: whole k-steps and
// m-tiles, rows 4-byte aligned (every load here is one 4-byte word: a channel pair).
__device__ __forceinline__ bool row_tiles_fit(int d) { return d % 16 == 0; }

// Scores of up to 32 fp16 rows (k0: the first row's KV head, rowBytes apart; n >= 1 of them the window's) for the HB
// held heads, into kt.score as key_tile_scores leaves them (score_index; the caller adds column h and column HB + h).
// m-tile i's rows g and g + 8 are tokens 16i + 2g and 16i + 2g + 1 (an m-tile's sums in a lane one float4 of
// score_index); lane (g, t) reads channels 16s + 2t, +1 and +8, +9
// of step s of those two tokens (4-byte loads; the staged weights' channel order), an m-tile at a time. Tokens past n read row n - 1 (a
// row of the window, finite; never weighed).
template <int HB>
__device__ __forceinline__ void row_tile_scores(const unsigned char* k0, long rowBytes, int n, int d, const uint2* frags, float* score,
                                                int lane) {
    int g = lane >> 2, t = lane & 3;
    __syncwarp();   // every lane has read the previous block's scores
#pragma unroll 1
    for (int i = 0; i < 2; i++) {   // m-tile i: tokens 16i + 2g and 16i + 2g + 1
        int tok0 = 16 * i + 2 * g, tok1 = tok0 + 1;
        const unsigned int* r0 = reinterpret_cast<const unsigned int*>(k0 + (tok0 < n ? tok0 : n - 1) * rowBytes) + t;
        const unsigned int* r1 = reinterpret_cast<const unsigned int*>(k0 + (tok1 < n ? tok1 : n - 1) * rowBytes) + t;
        const uint2* frag = frags + g * 4 + t;
        float acc[4] = {};
#pragma unroll 1
        for (int s = 0; s < d; s += KEY_STEP, r0 += 8, r1 += 8, frag += KEY_STEP_WORDS(HB)) {
            uint2 w = *frag;
            unsigned int bw[2] = {w.x, w.y};
            unsigned int a[4] = {r0[0], r1[0], r0[4], r1[4]};
            mma_m16n8k16_f32_f16(acc, a, bw, acc);
        }
        // acc[j]: token tok0 (j < 2) or tok1, column 2t + (j & 1)
        *reinterpret_cast<float4*>(score + score_index(tok0, 2 * t)) = make_float4(acc[0], acc[1], acc[2], acc[3]);
    }
    __syncwarp();
}

// The window's Σ p·v over its n fp16 rows (v0: the first row's KV head, rowBytes apart; tokens 0 .. 31 block A, 32 ..
// 63 block B where pair) into sO [head][channel], and Σ p a head into L (every lane's), as value_tiles: A holds V
// (channels on M, keys on K), m-tile m's rows g and g + 8 channels g·d/8 + 2m and + 1 (word m of the lane's slice:
// its low and high halves), k-step ks's keys 16ks + 2t, +1, +8, +9; a pair of keys' words becomes A's registers by
// PRMT. A window's k-steps (2, or 4 where pair) go into one accumulator an m-tile, an m-tile at a time (so a lane
// holds 4 words and 4 sums: the fp32 kernel is at 128 registers). Tokens past n read row n - 1 (weight 0, finite).
template <int HB>
__device__ __forceinline__ void row_value_tiles(const unsigned char* v0, long rowBytes, int n, int d, const float* pA, const float* pB,
                                                bool pair, int lane, const KeyTiles& kt, float* sO, float (&L)[HB]) {
    static_assert(HB == 4, "B's columns: each head's hi and lo, 8 in all");
    int g = lane >> 2, t = lane & 3;
    unsigned int bw[4][2];
    window_weights<HB>(pA, ROW_META, pB, ROW_META, lane, kt, bw);
    float sums[HB];
#pragma unroll
    for (int h = 0; h < HB; h++) sums[h] = pA[h] + pB[h];
    warp_sum_each<HB>(sums, lane);
#pragma unroll
    for (int h = 0; h < HB; h++) L[h] = sums[h];
    // The B fragments into kt.score (read by now), [lane][k-step]: one 8-byte load a k-step and m-tile, not four
    // fragments held in registers through the m-tiles.
    uint2* frag = reinterpret_cast<uint2*>(kt.score) + 4 * lane;
    __syncwarp();
#pragma unroll
    for (int ks = 0; ks < 4; ks++) frag[ks] = make_uint2(bw[ks][0], bw[ks][1]);
    __syncwarp();
    // Byte offsets of the lane's keys from v0's row: k-step ks's 16ks + 2t, +1, +8, +9 (32 bits: 63 rows at most),
    // worked out once a window, not once an m-tile.
    unsigned int off[16];
#pragma unroll
    for (int i = 0; i < 16; i++) {
        int tok = 16 * (i >> 2) + 2 * t + (i & 1) + 8 * ((i >> 1) & 1);
        off[i] = (unsigned int) ((tok < n ? tok : n - 1) * rowBytes);
    }
    const unsigned char* slice = v0 + g * (d >> 2);   // the lane's d/8 channels: d/4 bytes, word m m-tile m's
#pragma unroll 1
    for (int m = 0; m < (d >> 4); m++, slice += 4) {
        float acc[4] = {};
#pragma unroll
        for (int ks = 0; ks < 4; ks++) {   // unrolled: off[] stays in registers
            if (ks == 2 && !pair) break;
            uint2 b2 = frag[ks];
            unsigned int b[2] = {b2.x, b2.y};
            unsigned int w[4];   // keys 16ks + 2t, +1, +8, +9
#pragma unroll
            for (int o = 0; o < 4; o++) w[o] = *reinterpret_cast<const unsigned int*>(slice + off[4 * ks + o]);
            unsigned int A[4] = {__byte_perm(w[0], w[1], 0x5410), __byte_perm(w[0], w[1], 0x7632),
                                 __byte_perm(w[2], w[3], 0x5410), __byte_perm(w[2], w[3], 0x7632)};
            mma_m16n8k16_f32_f16(acc, A, b, acc);
        }
        // acc: head t's hi (column 2t: acc[0] channel c, acc[2] c + 1) and lo (2t + 1: acc[1], acc[3]), in this lane
        int c = g * (d >> 3) + 2 * m;
        *reinterpret_cast<float2*>(sO + t * d + c) =
                make_float2(acc[0] + acc[1] * (1.0f / 2048.0f), acc[2] + acc[3] * (1.0f / 2048.0f));
    }
    __syncwarp();
}
