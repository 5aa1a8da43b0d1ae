// The fp32 split-K decode kernels' tensor-core values (pnmix_decode.cu's header says where they fit): a window's
// values' weighted sum over its one or two 32-token blocks of a quantized group (stage_value_words by cp.async,
// staged_value_words, value_tiles), by mma.sync m16n8k16 with fp16 operands and fp32 accumulation (warp_ops.cuh);
// the keys' scores in key_tiles.cuh, fp16 rows' in row_tiles.cuh. Shared with pnmix_decode.cu only; edit it and the
// SASS fixture must be regenerated (sass-counts.py).
#pragma once
#include <cuda_pipeline.h>
#include "key_tiles.cuh"

// ---- Values of a quantized group on tensor cores (the fp32 packed kernel, where a value group is a whole head) ----
// A key's value is zero + code·scale with one scale and zero a token for the head, so the window's Σ_k p_k·v_k is
// Σ_k code_k·w_k + Σ_k p_k·zero_k with w = p·scale: an mma with A = the codes (channels on M, keys on K: exact small
// integers in fp16) and B = w (keys on K, heads on N); the second sum is one number a head, a warp sum. B in fp16 as
// hi + lo·2^-11 (hi = w rounded to fp16, lo = (w - hi)·2^11 rounded): head h's hi in column 2h, its lo in 2h + 1 (one
// mma a k-step does both), added once an m-tile in the lane that holds both (lane t: head t). hi is
// off by at most 2^-11 of w (2^-25 where w is below fp16's normal range) and lo, at most about w, is rounded in turn
// to 2^-11 of itself (2^-24 where it is subnormal), so a weight is off by at most 2^-22 of it or 2^-35, whichever is
// larger (without the 2^11 a weight below 2^-14 would keep only lo's subnormal bits). p <= 1 after raise_to and
// |scale| < 2^16: nothing overflows. Keys on K pair two tokens in every A register: lane (g, t) holds tokens 16s +
// 2t, +1, +8, +9 of k-step s (s = 0, 1: block A's 32; 2, 3: block B's) and, of each, channels [g·d/8, (g + 1)·d/8),
// one run of d·b/8 <= 32 bits: one word a token. m-tile m's rows g and g + 8 are channels g·d/8 + 2m and g·d/8 + 2m
// + 1. A pair of tokens' words becomes their low halves side by side and their high halves side by side (PRMT),
// shifted by 8 bits every 4/b m-tiles (value_mtiles: a channel read under a mask shifted to it), and each A register
// is one LOP3 (paired_codes_to_half2: the codes as fp16 subnormals, 2^-24 of them). The window's B fragments are one record a token
// (window_weights). The m-tiles' accumulators are the running state's (value_unscale's layout), kept in registers
// from window to window; Σ p goes into its l, Σ p·zero into its z.
// Where this applies (the _bB kernels, which CudaSplitKDecode.chunkKernel launches only then): a value group a whole
// head, b = B in 1, 2, 4, d a power of two from 16 to 128 (a lane's run of d·b/8 bits in one word), a token's codes
// 1 to 8 whole words.

// A lane's value codes and its token's scale/zero for value_tiles. lo[q], hi[q]: pair q's tokens 16(q >> 1) + 2t +
// 8(q & 1) and the next, their words' low halves side by side and their high halves; meta: block token τ = lane's.
struct ValueWords {
    unsigned int lo[4], hi[4], meta;
};

// They go through shared memory: a warp's stage holds both blocks of its window, each [32 tokens][VALUE_ROW_WORDS]
// (token τ's row of the head's codes, d·b/8 bytes: 1 to 8 words), then [32 lanes] the meta words. Lane τ copies token
// τ's row (cp.async: 16 bytes at a time where the row is a multiple of 16, the second copy predicated, else one copy of
// 8 or 4 bytes) and its meta, before the window's keys are scored; lane (g, t) reads the word of run g of each of its 8
// tokens after them (staged_value_words). So the values do not wait for the key phase and hold no registers during it
// (two blocks' words in registers there spill at 128 registers), and a block's copies cost a lane one address, not one
// a copy (8 tokens' words at 8 addresses). Once its copies are done (__pipeline_wait_prior) a lane reads other lanes'
// rows: __syncwarp after the wait (theirs are done too); the next window's copies come after every lane has used what
// it read (the values' mma, then value_tiles' closing __syncwarp).
#define VALUE_ROW_WORDS 12   // a row's words: up to 8, 12 apart so the reads below are conflict-free
#define VALUE_STAGE_BLOCK_WORDS (32 * VALUE_ROW_WORDS + 32)
#define VALUE_STAGE_BYTES (2 * VALUE_STAGE_BLOCK_WORDS * 4)   // a warp's: two blocks; a multiple of 16

// Copies lane τ's token of each of the window's two blocks (A from the group's token blk0, B 32 on; its row of the
// head's codes and its meta) into the stage, both blocks whether or not the window holds B (one set of predicates for
// both, no branch; B's weights are then 0). Tokens past the group copy its last token's, whose weights are 0 (in the
// group: finite).
__device__ __forceinline__ void stage_value_words(const Cache& K, int grp, int blk0, int kvh, int lane, unsigned int* stage) {
    // Token indices in the group storage (as CudaCacheCopy's int sizes); a row's address is the KV head's first plus
    // one 64-bit product of two unsigned 32-bit numbers (IMAD.WIDE.U32; as a pointer, ptxas adds the base apart).
    unsigned int first = (unsigned int) (grp * K.G), last = first + (unsigned int) (K.G - 1);
    unsigned int tok[2] = {first + blk0 + lane, first + blk0 + 32 + lane};
    const unsigned int* meta = reinterpret_cast<const unsigned int*>(K.valueMeta) + kvh;
    unsigned long long codes = reinterpret_cast<unsigned long long>(K.valueCodes + kvh * K.vgBytes);
    unsigned int stride = (unsigned int) (K.vgroups * K.vgBytes);   // bytes a token
    const unsigned int* from[2];
#pragma unroll
    for (int blk = 0; blk < 2; blk++) {
        tok[blk] = tok[blk] < last ? tok[blk] : last;
        copy_async_if<4>(true, stage + blk * VALUE_STAGE_BLOCK_WORDS + 32 * VALUE_ROW_WORDS + lane,
                         meta + (unsigned long long) tok[blk] * K.vgroups);
        from[blk] = reinterpret_cast<const unsigned int*>(codes + (unsigned long long) tok[blk] * stride);
    }
    unsigned int* to = stage + lane * VALUE_ROW_WORDS;   // 48 bytes a row: 16-byte aligned
    // A row's d·b/8 bytes, 4 to 32 (CudaSplitKDecode.chunkKernel: d·b a multiple of 32, at most 256), in the widest
    // copies it is a multiple of (the rows, in the cache and in the stage, are aligned as wide): 16 bytes where it is
    // a multiple of 16 (one or two), else one copy of 8 or 4; the same branch in every lane.
    int bytes = K.vgBytes;
    if ((bytes & 15) == 0) {
#pragma unroll
        for (int i = 0; i < 2; i++) {
            copy_async_if<16>(16 * i < bytes, to + 4 * i, from[0] + 4 * i);
            copy_async_if<16>(16 * i < bytes, to + VALUE_STAGE_BLOCK_WORDS + 4 * i, from[1] + 4 * i);
        }
    } else if (bytes == 8) {
        copy_async_if<8>(true, to, from[0]);
        copy_async_if<8>(true, to + VALUE_STAGE_BLOCK_WORDS, from[1]);
    } else {
        copy_async_if<4>(true, to, from[0]);
        copy_async_if<4>(true, to + VALUE_STAGE_BLOCK_WORDS, from[1]);
    }
}

// Lane (g, t)'s words of a block (stage_value_words; every lane's copies done), each run shifted to bit 0: of pair
// q's tokens 16(q >> 1) + 2t + 8(q & 1) and the next, the word that holds run g. Rows VALUE_ROW_WORDS = 12 apart:
// lanes t = 0 .. 3 read tokens 2t (+ a constant) apart, 24t mod 32 = 0, 24, 16, 8 banks on, and g's words are the
// next ones (at most 8 of them), so a read is conflict-free.
__device__ __forceinline__ ValueWords staged_value_words(const unsigned int* stage, int d, int b, int lane) {
    ValueWords v;
    int runBit = (lane >> 2) * (d >> 3) * b, shift = runBit & 31;   // the run's first bit in its word
    const unsigned int* words = stage + 2 * (lane & 3) * VALUE_ROW_WORDS + (runBit >> 5);
#pragma unroll
    for (int q = 0; q < 4; q++) {
        int r = 16 * (q >> 1) + 8 * (q & 1);
        unsigned int x0 = words[r * VALUE_ROW_WORDS] >> shift, x1 = words[(r + 1) * VALUE_ROW_WORDS] >> shift;
        v.lo[q] = __byte_perm(x0, x1, 0x5410);
        v.hi[q] = __byte_perm(x0, x1, 0x7632);
    }
    v.meta = stage[32 * VALUE_ROW_WORDS + lane];
    return v;
}

// The running state in value_tiles' layout (tile_state): lane (g, t) holds, of head t, m-tile m's accumulator (m <
// d/16) in acc[4m .. 4m + 3]: channel c = g·d/8 + 2m's hi sum (column 2t), its lo·2^11 sum (2t + 1), then channel c +
// 1's two. In code units: channel c's value is (hi + lo·2^-11)·value_unscale<B>(m, 0) + z, c + 1's the same with
// value_unscale<B>(m, 1) (z: head t's Σ p·zero, the sum of the lanes' shares).
template <int B>
__host__ __device__ constexpr float value_unscale(int m, int up) {
    // m-tile m's rows, in its half's word, sit 2b·p bits up (p = m mod 4/B) and the odd channel b further:
    // value_mtiles reads them under a mask shifted there, so its sums are 2^(2bp) (2^(2bp + b)) times the codes'
    return CODE_UNSCALE / (float) (1u << (2 * B * (m % (4 / B)) + (up ? B : 0)));
}

// value_tiles' m-tiles for B-bit codes: the window's Σ code·w into the state's accumulators (acc: value_unscale's
// layout), over its two blocks' words (vw[0]: k-steps 0 and 1, vw[1]: 2 and 3; bw: the weights' B fragments a k-step,
// head h's hi in column 2h and lo·2^11 in 2h + 1). Unrolled over m-tiles: an accumulator a register, kept from window
// to window (no store, and no add into acc a window). The m-tiles: the low halves hold the run's channels below 16/b,
// 8/b m-tiles; the high halves the rest. A channel is taken where it lies in its half, under the mask shifted as far,
// not the word shifted: m-tile p's rows g and g + 8 (channels 2m and 2m + 1) 2bp and 2bp + b bits up, their codes
// times 2^2bp and 2^(2bp + b), exact in fp16 while below 2^10 (the fp16 subnormals' 10 bits), so 4/b m-tiles a shift
// of the words: 2b·4/b = 8 bits of each half.
template <int B>
__device__ __forceinline__ void value_mtiles(int d, const ValueWords (&vw)[2], const unsigned int (&bw)[4][2], float* acc) {
    constexpr int perHalf = 8 / B, MG = 4 / B;
    constexpr unsigned int mask = ((1u << B) - 1u) * 0x10001u;
    int tiles = d >> 4;   // d / 16: 1, 2, 4 or 8 (CudaSplitKDecode.chunkKernel)
#pragma unroll
    for (int half = 0; half < 2; half++) {
        unsigned int v[8];
#pragma unroll
        for (int q = 0; q < 8; q++) v[q] = half ? vw[q >> 2].hi[q & 3] : vw[q >> 2].lo[q & 3];
#pragma unroll
        for (int i = 0; i < perHalf; i++) {
            const int m = half * perHalf + i, p = i % MG;
            if (m >= 8 || (m > 0 && m >= tiles)) return;   // B = 1: the low halves hold all 8
            if (i > 0 && p == 0) {
#pragma unroll
                for (int q = 0; q < 8; q++) v[q] >>= 2 * B * MG;
            }
            const unsigned int low = mask << (2 * B * p), up = mask << (2 * B * p + B);
            float* c = acc + 4 * m;
#pragma unroll
            for (int ks = 0; ks < 4; ks++) {
                unsigned int A[4];   // rows g (channel 2m of the run) and g + 8 (2m + 1); tokens 2t, 2t + 1, then + 8
                A[0] = paired_codes_to_half2(v[2 * ks], low);
                A[1] = paired_codes_to_half2(v[2 * ks], up);
                A[2] = paired_codes_to_half2(v[2 * ks + 1], low);
                A[3] = paired_codes_to_half2(v[2 * ks + 1], up);
                mma_m16n8k16_f32_f16(c, A, bw[ks], c);
            }
        }
    }
}

// A token's record of its weights w = p·scale for B (window_weights): its 2·HB columns as fp16, head h's hi in column
// 2h and its lo·2^11 (lo = w - hi, rounded in turn) in 2h + 1, so an accumulator's two columns in a lane are one
// head's hi and lo sums (value_mtiles adds them there: no shuffle).
template <int HB>
__device__ __forceinline__ uint4 weight_record(const float* p, float scale) {
    static_assert(HB == 4, "a token's 8 columns: one 16-byte record");
    unsigned int w[4];
#pragma unroll
    for (int k = 0; k < 2; k++) {   // heads 2k and 2k + 1 at once
        float w0 = p[2 * k] * scale, w1 = p[2 * k + 1] * scale;
        __half2 h2 = __floats2half2_rn(w0, w1);
        float2 back = __half22float2(h2);
        unsigned int hi = half2_bits(h2), lo = half2_bits(__floats2half2_rn((w0 - back.x) * 2048.0f, (w1 - back.y) * 2048.0f));
        w[2 * k] = __byte_perm(hi, lo, 0x5410);       // head 2k: hi, lo
        w[2 * k + 1] = __byte_perm(hi, lo, 0x7632);   // head 2k + 1
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// Lane (g, t)'s B fragments of a window's k-steps (bw[ks]: block A's 0 and 1, block B's 2 and 3), from the weights
// pA, pB of lane τ's token τ of each block and their scales (metaA, metaB; a block the window does not hold has
// weights 0): column 2h: hi of head h's, column 2h + 1: its lo·2^11. Lane τ writes its two tokens'
// records (weight_record) through kt.score (read by now), [token][column]; lane (g, t) takes column g of tokens 16ks
// + 2t, +1 (bw[ks][0]) and +8, +9 (bw[ks][1]): each one computed once, by its token's lane, not in every lane that
// takes it.
template <int HB>
__device__ __forceinline__ void window_weights(const float* pA, unsigned int metaA, const float* pB, unsigned int metaB, int lane,
                                               const KeyTiles& kt, unsigned int (&bw)[4][2]) {
    int g = lane >> 2, t = lane & 3;
    uint4* records = reinterpret_cast<uint4*>(kt.score);
    __syncwarp();
    records[lane] = weight_record<HB>(pA, half_lo(metaA));
    records[32 + lane] = weight_record<HB>(pB, half_lo(metaB));
    __syncwarp();
    const unsigned short* column = reinterpret_cast<const unsigned short*>(kt.score) + g;   // token τ's: 2·HB·τ on
#pragma unroll
    for (int ks = 0; ks < 4; ks++) {
#pragma unroll
        for (int r = 0; r < 2; r++) {
            int tok = 16 * ks + 8 * r + 2 * t;
            bw[ks][r] = __byte_perm(column[2 * HB * tok], column[2 * HB * (tok + 1)], 0x5410);
        }
    }
}

// The window's Σ p·v added to the state in value_tiles' layout (acc: value_unscale's), and the lane's tokens' Σ p and
// Σ p·zero a head to its shares of l and z (untile_state sums the shares over the warp: no reduction a window), over
// its blocks A and B (where the window holds no key of B, B's weights and words are 0). pA, pB: the weights of the
// lane's token of each block (0 where the window does not hold it), against the state's max; vw: staged_value_words
// of A and B.
template <int HB, int B>
__device__ __forceinline__ void value_tiles(int d, const float* pA, const float* pB, const ValueWords (&vw)[2], int lane,
                                            const KeyTiles& kt, float* acc, float (&l)[HB], float (&z)[HB]) {
    static_assert(HB == 4, "B's columns: each head's hi and lo, 8 in all");
    unsigned int bw[4][2];
    window_weights<HB>(pA, vw[0].meta, pB, vw[1].meta, lane, kt, bw);
    float zeroA = half_hi(vw[0].meta), zeroB = half_hi(vw[1].meta);
#pragma unroll
    for (int h = 0; h < HB; h++) {
        l[h] += pA[h] + pB[h];
        z[h] += pA[h] * zeroA + pB[h] * zeroB;
    }
    value_mtiles<B>(d, vw, bw, acc);
    __syncwarp();   // every lane's columns of kt.score read before the next window's scores
}
