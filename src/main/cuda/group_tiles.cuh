// The fp32 split-K decode kernels' tensor-core windows (pnmix_decode.cu's header says where they fit): a quantized
// group's keys' scores a 32-token block at a time (stage_key_weights once a group, key_tile_scores) and a window's
// values' weighted sum over its one or two blocks (stage_value_words by cp.async, staged_value_words, value_tiles),
// by mma.sync m16n8k16 with fp16 operands and fp32 accumulation (warp_ops.cuh); fp16 rows' likewise in
// row_tiles.cuh. Shared with pnmix_decode.cu only; edit it and the SASS fixture must be regenerated (sass-counts.py).
#pragma once
#include <cuda_pipeline.h>
#include "packed_cache.cuh"
#include "warp_ops.cuh"

#define TILE_TOKENS 32   // a group's block: the tokens key_tile_scores scores at once (a window holds one or two)

// ---- Keys of a quantized group on tensor cores (the fp32 packed kernel) ----
// q·k with k = zero + code·scale (the CPU twin's dequantization) is Σ_c q_c·zero_c + Σ_c (q_c·scale_c)·code_c: a
// group's zeros and scales are per channel, so per group and held head the first sum is one number (zsum) and the
// second a product of the keys' codes, exact small integers in fp16, with weights w_c = q_c·scale_c: an mma a
// 16-channel step (m16n8k16, fp32 accumulation; warp_ops.cuh). fp16 holds 11 bits of w, so w goes in as two halves,
// hi = w rounded to fp16 and lo = (w - hi) rounded, 22 bits: hi in B's columns 0 .. HB - 1 and lo in HB .. 2·HB - 1
// (the HB = 4 held heads fill half of N = 8, so one mma a step does both; their scores are added after the block's
// last step, once a token and head); w is scaled per
// head by a power of two (exact) that puts its largest |w| in [2^14, 2^15): nothing overflows, lo keeps its 11 bits
// for every weight down to 2^-17 of the largest, and a smaller one is off by at most 2^-39 of the largest. Why not dequantize in half2 (zero + code·scale by HFMA2): the key would be rounded
// to 11 bits, far outside the fp32 twin's tolerance; here only w is split, and to 22 bits. The fp64 kernel keeps
// key_scores.
#define KEY_STEP 16   // channels of one mma k-step

__device__ __forceinline__ int key_steps(int d) { return (d + KEY_STEP - 1) >> 4; }   // d >= 0: a shift

// A step's staged words (KEY_STEP_WORDS uint2): the B fragments [2·HB][4] (lane (g, t)'s b[0], b[1]; column g: hi of
// head g < HB, lo of head g - HB), then [4] the masks of lane t's channel pairs (16s + 2t, +1 and +8, +9: each
// channel's (1 << b) - 1 in its half; 0 past d), so the key loop does not work them out from the widths; then lane
// t's four channels' stream offsets in words (uint4, [4]) and bit widths (uint4, [4]; both 0 past d), so the key
// loop reads a step's channels with two shared-memory loads, not four global ones and their pointers' adds.
#define KEY_STEP_WORDS(HB) (2 * (HB) * 4 + 4 + 16)
#define KEY_STEP_CHANNELS(HB) ((2 * (HB) * 4 + 4) / 2)   // the offsets' first uint4 in a step

// A warp's parts of shared memory for its quantized groups (decode_chunk places them; CudaSplitKDecode#sharedBytes).
struct KeyTiles {
    uint2* frag;      // [key_steps(d)][KEY_STEP_WORDS(HB)]: B fragments, channel masks, offsets and widths, a step's
    float* score;     // [2·HB][TILE_TOKENS]: the block's scores (hi's columns, then lo's) before unscale and zsum, then the values' weights (value_tiles)
    float* unscale;   // [HB]: 2^-e, e the head's scaling exponent
    float* zsum;      // [HB]: Σ_c q_c·zero_c, then (int) the group's key path: 1 for key_pair_scores (stage_weights)
    unsigned int* stage;   // VALUE_STAGE_BYTES: the window's value words (stage_value_words; where d <= 128)
};

// A warp's score, unscale, zsum and key path, of a size that does not depend on d (so their addresses are a constant
// times the warp: cheap where ptxas works them out again in the window loop); a multiple of 16.
__host__ __device__ constexpr int key_score_bytes(int hb) { return 2 * hb * TILE_TOKENS * 4 + 2 * hb * 4 + 16; }

// The widest key code key_pair_scores takes: a lane's four tokens' run of a channel, 4b bits, fits a 16-bit half.
#define PAIR_MAX_BITS 4

// A warp's staged steps.
__device__ __forceinline__ int key_frag_bytes(int d, int hb) { return key_steps(d) * KEY_STEP_WORDS(hb) * 8; }

// A scale/zero word of scale 1 and zero 0 (fp16 1.0 in the low half): fp16 rows' keys and values as the groups'.
#define ROW_META 0x3c00u

// The warp's weights for group g's keys (meta, bits: the group's [channel] scale/zero words and widths from the KV
// head's first channel; sQ: the pass's query [channel][HB], zero past its heads), and its channels' masks, into kt;
// channels from d to the last step's end weigh 0. Once per group and pass, by the warp that enters the group (the
// warps walk different stretches). ROWS: fp16 rows' weights instead, the query itself (scale 1, zero 0; masks 0;
// meta, bits and offsets unread), once a pass by a block's warp 0 (stage_row_weights).
template <int HB, bool ROWS>
__device__ __forceinline__ void stage_weights(const unsigned int* meta, const int* bits, const int* offsets, int d, const float* sQ,
                                              uint2* fragOut, float* unscale, float* zsum, int lane) {
    static_assert(HB == 4, "a channel's held heads are one 16-byte load of sQ");
    unsigned short* frag = reinterpret_cast<unsigned short*>(fragOut);
    int padded = key_steps(d) * KEY_STEP;
    __syncwarp();   // every lane has read the previous group's weights and scores
    // Per head its largest |w| and Σ q·zero, a channel a lane.
    float big[HB] = {}, z[HB] = {};
#pragma unroll 1
    for (int c = lane; c < d; c += 32) {
        unsigned int m = ROWS ? ROW_META : meta[c];
        float4 q4 = *reinterpret_cast<const float4*>(sQ + c * HB);   // the channel's HB = 4 heads, 16-byte aligned
        float q[HB] = {q4.x, q4.y, q4.z, q4.w};
#pragma unroll
        for (int h = 0; h < HB; h++) {
            float w = fabsf(q[h] * half_lo(m));
            big[h] = w > big[h] ? w : big[h];
            z[h] += q[h] * half_hi(m);
        }
    }
    // Per head the power of two up = 2^e: big = 2^x · 1.f (x from its exponent field; a subnormal counts as 2^-126),
    // e = 14 - x, at most 100 so 2^-e stays a normal float (a head whose weights are all below 2^-86 keeps them to
    // about 2^-124 absolute).
    float up[HB];
    warp_max_each<HB>(big, lane);
    warp_sum_each<HB>(z, lane);
#pragma unroll
    for (int h = 0; h < HB; h++) {
        int x = (int) ((__float_as_uint(big[h]) >> 23) & 0xffu) - 127;
        int e = big[h] > 0 ? 14 - (x < -126 ? -126 : x) : 0;
        e = e > 100 ? 100 : e;
        up[h] = __uint_as_float((unsigned int) (127 + e) << 23);
        if (lane == 0) {
            unscale[h] = __uint_as_float((unsigned int) (127 - e) << 23);
            zsum[h] = z[h];
        }
    }
    // The weights, hi and lo, into lane (h, t)'s and lane (HB + h, t)'s fragments: channel c of step s = c / 16 is
    // half (c & 1) of b[(c & 15) >> 3], t = (c & 7) >> 1; channels from d to the last step's end weigh 0. The
    // channel's mask likewise into mask word t of the step.
    bool pairs = true;   // every channel pair (c, c ^ 1) of one width, at most PAIR_MAX_BITS (key_pair_scores)
#pragma unroll 1
    for (int c = lane; c < padded; c += 32) {
        unsigned int m = c < d ? (ROWS ? ROW_META : meta[c]) : 0u;
        float4 q4 = c < d ? *reinterpret_cast<const float4*>(sQ + c * HB) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        float q[HB] = {q4.x, q4.y, q4.z, q4.w};
        int b = c < d && !ROWS ? bits[c] : 0;
        if (!ROWS && c < d) pairs = pairs && b <= PAIR_MAX_BITS && (c ^ 1) < d && bits[c ^ 1] == b;
        unsigned short* f = frag + ((c >> 4) * KEY_STEP_WORDS(HB) + ((c & 7) >> 1)) * 4 + ((c & 15) >> 3) * 2 + (c & 1);
        f[2 * HB * 16] = (unsigned short) ((1u << b) - 1u);
        if constexpr (!ROWS) {   // the channel's offset and width: word (c & 1) + 2 ((c >> 3) & 1) of lane t's uint4s
            uint4* channels = reinterpret_cast<uint4*>(fragOut + (c >> 4) * KEY_STEP_WORDS(HB)) + KEY_STEP_CHANNELS(HB) + ((c & 7) >> 1);
            unsigned int* o = reinterpret_cast<unsigned int*>(channels) + (c & 1) + ((c >> 2) & 2);
            o[0] = c < d ? (unsigned int) offsets[c] >> 2 : 0u;
            o[16] = (unsigned int) b;   // 4 uint4 on: the widths
        }
#pragma unroll
        for (int h = 0; h < HB; h++) {
            float w = q[h] * half_lo(m) * up[h];
            __half hi = __float2half_rn(w);
            __half lo = __float2half_rn(w - __half2float(hi));
            f[h * 16] = __half_as_ushort(hi);
            f[(HB + h) * 16] = __half_as_ushort(lo);
        }
    }
    if constexpr (!ROWS) {
        bool all = __all_sync(FULL, pairs);
        if (lane == 0) *reinterpret_cast<int*>(zsum + HB) = all;
    }
    __syncwarp();
}

// Not inlined, either: their registers do not add to the window loop's, and the SASS count finds them (sass-counts.py).
template <int HB>
__device__ __noinline__ void stage_key_weights(const unsigned int* meta, const int* bits, const int* offsets, int d, const float* sQ,
                                               uint2* fragOut, float* unscale, float* zsum, int lane) {
    stage_weights<HB, false>(meta, bits, offsets, d, sQ, fragOut, unscale, zsum, lane);
}

template <int HB>
__device__ __noinline__ void stage_row_weights(int d, const float* sQ, uint2* fragOut, float* unscale, float* zsum, int lane) {
    stage_weights<HB, true>(nullptr, nullptr, nullptr, d, sQ, fragOut, unscale, zsum, lane);
}

// Lane (g, t)'s words for a block's key scores (key_tile_scores, key_pair_scores): its first token, 4g on from blk0
// (tokens past the group, a last block shorter than 32, read the block's first token's run instead: in the group,
// and never keys of the window), and step 0's B fragment, channel masks and channels (KEY_STEP_WORDS on a step).
struct KeyLane {
    int tok;
    const uint2* frag;
    const uint2* masks;
    const uint4* channels;
};

template <int HB>
__device__ __forceinline__ KeyLane key_lane(const Cache& K, int blk0, const KeyTiles& kt, int lane) {
    int g = lane >> 2, t = lane & 3;
    return {blk0 + 4 * g < K.G ? blk0 + 4 * g : blk0, kt.frag + g * 4 + t, kt.frag + 2 * HB * 4 + t,
            reinterpret_cast<const uint4*>(kt.frag) + KEY_STEP_CHANNELS(HB) + t};
}

// A step's channels 16s + 2t, +1, +8, +9 of the lane (their stream offsets in words and widths, staged): the widths
// in b and the codes of tok .. tok + 3 from bit 0 in x, one funnel shift of two words a channel. Past d their width
// and offset are 0: words 0 and 1 read, which weigh 0 (stage_key_weights), so no test a channel.
__device__ __forceinline__ void step_runs(const unsigned int* words, const uint4* channels, int tok, int (&b)[4],
                                          unsigned int (&x)[4]) {
    uint4 o4 = channels[0], b4 = channels[4];
    unsigned int off[4] = {o4.x, o4.y, o4.z, o4.w};
    b[0] = (int) b4.x;
    b[1] = (int) b4.y;
    b[2] = (int) b4.z;
    b[3] = (int) b4.w;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        int bit = tok * b[j], i = (int) off[j] + (bit >> 5);
        x[j] = __funnelshift_r(words[i], words[i + 1], bit);   // shifts by bit mod 32
    }
}

// A block's scores from the mma accumulators (acc[i][j]: token 4g + 2i (j < 2) or 4g + 2i + 1 (j >= 2), column
// 2t + (j & 1)) into kt.score: column j's scores in row j.
__device__ __forceinline__ void put_block_scores(const float (&acc)[2][4], const KeyTiles& kt, int lane) {
    int g = lane >> 2, t = lane & 3;
    __syncwarp();   // every lane has read the previous window's scores
#pragma unroll
    for (int j = 0; j < 2; j++) {
        *reinterpret_cast<float4*>(kt.score + (2 * t + j) * TILE_TOKENS + 4 * g) =
            make_float4(acc[0][j], acc[0][2 + j], acc[1][j], acc[1][2 + j]);
    }
    __syncwarp();
}

// key_tile_scores where the group's channel pairs (16s + 2t, +1 and +8, +9) each share one width of at most
// PAIR_MAX_BITS (stage_weights' flag; the bench's adjacent RoPE pairs at 3 and 1 bits): a pair's four tokens' runs
// fit side by side in one word's halves (one PRMT a pair a step), and one shift by the pair's width moves both
// channels on to the next token (the bits shifted from the high half into the low one lie above its mask). 8 shifts
// and 2 PRMT a step where key_tile_scores takes 16 and 8.
template <int HB>
__device__ __forceinline__ void key_pair_scores(const Cache& K, int blk0, int d, const KeyTiles& kt, int lane) {
    const unsigned int* words = reinterpret_cast<const unsigned int*>(K.keyCodes);
    KeyLane k = key_lane<HB>(K, blk0, kt, lane);
    float acc[2][4] = {};
#pragma unroll 1
    for (int step = 0; step < key_steps(d); step++, k.frag += KEY_STEP_WORDS(HB), k.masks += KEY_STEP_WORDS(HB), k.channels += KEY_STEP_WORDS(HB) / 2) {
        int b[4];
        unsigned int x[4];
        step_runs(words, k.channels, k.tok, b, x);
        unsigned int p01 = __byte_perm(x[0], x[1], 0x5410), p23 = __byte_perm(x[2], x[3], 0x5410);
        int b01 = b[0], b23 = b[2];   // = b[1], b[3]
        uint2 m = *k.masks, w = *k.frag;
        unsigned int bw[2] = {w.x, w.y};
#pragma unroll
        for (int i = 0; i < 2; i++) {
            unsigned int a[4];   // row g: code 2i of the runs; row g + 8: code 2i + 1
            a[0] = paired_codes_to_half2(p01, m.x);
            a[2] = paired_codes_to_half2(p23, m.y);
            p01 >>= b01;
            p23 >>= b23;
            a[1] = paired_codes_to_half2(p01, m.x);
            a[3] = paired_codes_to_half2(p23, m.y);
            p01 >>= b01;
            p23 >>= b23;
            mma_m16n8k16_f32_f16(acc[i], a, bw, acc[i]);
        }
    }
    put_block_scores(acc, kt, lane);
}

// Scores of the 32 tokens of the group's block that starts at token blk0 (the group's channels' widths and offsets
// staged with its weights) for the HB held heads, into kt.score [head][token], on tensor cores: D[token][head]
// = Σ_c code[token][c]·w[c][head]. A holds the codes (tokens on M: m-tile i's row g is token 4g + 2i, row g + 8 token
// 4g + 2i + 1, so a lane's four tokens 4g .. 4g + 3 are one run of 4b bits in each of its channels' streams: one
// funnel shift of two words a channel), B the staged weights (hi's heads on N, then lo's). Into kt.score: column
// j's scores in row j (the caller adds row h and row HB + h). Lane (g, t) reads channels 16s + 2t, +1, +8, +9 of
// step s (d even), past d too (weights 0), and tokens as key_lane says.
template <int HB>
__device__ __forceinline__ void key_tile_scores(const Cache& K, int blk0, int d, const KeyTiles& kt, int lane) {
    if (*reinterpret_cast<const int*>(kt.zsum + HB)) {   // the group's pairs fit key_pair_scores (stage_weights)
        key_pair_scores<HB>(K, blk0, d, kt, lane);
        return;
    }
    const unsigned int* words = reinterpret_cast<const unsigned int*>(K.keyCodes);
    KeyLane k = key_lane<HB>(K, blk0, kt, lane);
    float acc[2][4] = {};
#pragma unroll 1
    for (int s = 0; s < key_steps(d); s++, k.frag += KEY_STEP_WORDS(HB), k.masks += KEY_STEP_WORDS(HB), k.channels += KEY_STEP_WORDS(HB) / 2) {
        int b[4];
        unsigned int x[4];
        step_runs(words, k.channels, k.tok, b, x);
        uint2 m = *k.masks, w = *k.frag;
        unsigned int m01 = m.x, m23 = m.y;
        unsigned int bw[2] = {w.x, w.y};
#pragma unroll
        for (int i = 0; i < 2; i++) {
            unsigned int a[4];   // row g: code 2i of the run; row g + 8: code 2i + 1 (each x shifted on by its width)
            a[0] = codes_to_half2(x[0], x[1], m01);
            a[2] = codes_to_half2(x[2], x[3], m23);
#pragma unroll
            for (int j = 0; j < 4; j++) x[j] >>= b[j];
            a[1] = codes_to_half2(x[0], x[1], m01);
            a[3] = codes_to_half2(x[2], x[3], m23);
#pragma unroll
            for (int j = 0; j < 4; j++) x[j] >>= b[j];
            mma_m16n8k16_f32_f16(acc[i], a, bw, acc[i]);
        }
    }
    put_block_scores(acc, kt, lane);
}

// Block token `lane`'s score for held head h as key_tile_scores (or row_tile_scores) leaves it in kt.score: hi's
// column plus lo's, unscaled, plus the zero sum (0 for fp16 rows).
template <int HB>
__device__ __forceinline__ float tile_score(const KeyTiles& kt, int h, int lane) {
    return (kt.score[h * TILE_TOKENS + lane] + kt.score[(HB + h) * TILE_TOKENS + lane]) * kt.unscale[h] + kt.zsum[h];
}

// ---- Values of a quantized group on tensor cores (the fp32 packed kernel, where a value group is a whole head) ----
// A key's value is zero + code·scale with one scale and zero a token for the head, so the window's Σ_k p_k·v_k is
// Σ_k code_k·w_k + Σ_k p_k·zero_k with w = p·scale: an mma with A = the codes (channels on M, keys on K: exact small
// integers in fp16) and B = w (keys on K, heads on N); the second sum is one number a head, a warp sum. B in fp16 as
// hi + lo·2^-11 (hi = w rounded to fp16, lo = (w - hi)·2^11 rounded): hi in columns 0 .. HB - 1, lo in HB .. 2·HB -
// 1 (as the keys' weights: one mma a k-step does both), added once an m-tile (lane t < 2 takes lane t + 2's). hi is
// off by at most 2^-11 of w (2^-25 where w is below fp16's normal range) and lo, at most about w, is rounded in turn
// to 2^-11 of itself (2^-24 where it is subnormal), so a weight is off by at most 2^-22 of it or 2^-35, whichever is
// larger (without the 2^11 a weight below 2^-14 would keep only lo's subnormal bits). p <= 1 after raise_to and
// |scale| < 2^16: nothing overflows. Keys on K pair two tokens in every A register: lane (g, t) holds tokens 16s +
// 2t, +1, +8, +9 of k-step s (s = 0, 1: block A's 32; 2, 3: block B's) and, of each, channels [g·d/8, (g + 1)·d/8),
// one run of d·b/8 <= 32 bits: one word a token. m-tile m's rows g and g + 8 are channels g·d/8 + 2m and g·d/8 + 2m
// + 1. A pair of tokens' words becomes their low halves side by side and their high halves side by side (PRMT),
// shifted by 2b an m-tile, and each A register is one LOP3 and one HSUB2 (paired_codes_to_half2). The window's sum
// per head and channel goes through the warp's slice of sAcc (unused until the pass ends) into team 0's acc, its Σ p
// into team 0's l (the weights are against team 0's max).
__device__ __forceinline__ bool value_tiles_fit(int gc, int d, int b) {
    return gc == d && (b == 1 || b == 2 || b == 4) && d % 16 == 0 && d <= 128 && (d * b) % 32 == 0 && d * b <= 256;
}

__device__ __forceinline__ unsigned int half2_bits(__half2 h) {
    unsigned int u;
    memcpy(&u, &h, sizeof u);
    return u;
}

// A lane's value codes and its token's scale/zero for value_tiles. lo[q], hi[q]: pair q's tokens 16(q >> 1) + 2t +
// 8(q & 1) and the next, their words' low halves side by side and their high halves; meta: block token τ = lane's.
struct ValueWords {
    unsigned int lo[4], hi[4], meta;
};

// They go through shared memory: a warp's stage holds both blocks of its window, each [2 chunks][32 lanes][4 words]
// (the lane's 8 code words, chunk c: pairs q = 2c, 2c + 1, each its two tokens' words; one conflict-free 16-byte load
// a chunk), then [32 lanes] the meta words. Copied by cp.async (__pipeline_memcpy_async: LDGSTS, 4 bytes each) before
// the window's keys are scored and read after them, so the values do not wait for the key phase and hold no
// registers during it (two blocks' words in registers there spill at 128 registers). A lane reads only its own
// words, once its copies are done (__pipeline_wait_prior); its next copies into them come after it has used what it
// read (the values' mma), so no barrier.
#define VALUE_STAGE_BLOCK_WORDS (2 * 32 * 4 + 32)
#define VALUE_STAGE_BYTES (2 * VALUE_STAGE_BLOCK_WORDS * 4)   // a warp's: two blocks; a multiple of 16

// Copies the lane's words of the group's block that starts at blk0 into stage (this block's part). Tokens past the
// group read its last token's words, whose weights are 0; a lane whose token the window does not hold copies the
// block's first token's meta (in the group, finite: its weight is 0).
__device__ __forceinline__ void stage_value_words(const Cache& K, int grp, int blk0, bool holds, int kvh, int d, int lane,
                                                  unsigned int* stage) {
    int g = lane >> 2, t = lane & 3, b = K.valueBits;
    // The block's first token's (token, value group) index; a token's is K.vgroups on.
    long row0 = ((long) grp * K.G + blk0) * K.vgroups + kvh;
    __pipeline_memcpy_async(stage + 2 * 32 * 4 + lane,
                            reinterpret_cast<const unsigned int*>(K.valueMeta) + row0 + (long) (holds ? lane : 0) * K.vgroups, 4);
    // The word with the lane's run of each token. Bytes a token; the block's last token in the group. A token's word:
    // first plus a 64-bit product of two unsigned 32-bit numbers, one IMAD.WIDE.U32 an address.
    int runBit = g * (d >> 3) * b;
    const unsigned char* first = K.valueCodes + row0 * K.vgBytes + (runBit >> 5) * 4;
    unsigned int stride = K.vgroups * K.vgBytes;
    int last = K.G - 1 - blk0;
#pragma unroll
    for (int q = 0; q < 4; q++) {
        int r = 16 * (q >> 1) + 2 * t + 8 * (q & 1);
        unsigned int r0 = r < last ? r : last, r1 = r + 1 < last ? r + 1 : last;
        unsigned int* to = stage + ((q >> 1) * 32 + lane) * 4 + (q & 1) * 2;
        __pipeline_memcpy_async(to, first + (unsigned long long) r0 * stride, 4);
        __pipeline_memcpy_async(to + 1, first + (unsigned long long) r1 * stride, 4);
    }
}

// The lane's staged words of a block (stage_value_words; its copies done), each run shifted to bit 0.
__device__ __forceinline__ ValueWords staged_value_words(const unsigned int* stage, int d, int b, int lane) {
    ValueWords v;
    int shift = ((lane >> 2) * (d >> 3) * b) & 31;   // the run's first bit in its word
#pragma unroll
    for (int c = 0; c < 2; c++) {
        uint4 w = *reinterpret_cast<const uint4*>(stage + (c * 32 + lane) * 4);
        unsigned int x[4] = {w.x >> shift, w.y >> shift, w.z >> shift, w.w >> shift};
#pragma unroll
        for (int k = 0; k < 2; k++) {
            v.lo[2 * c + k] = __byte_perm(x[2 * k], x[2 * k + 1], 0x5410);
            v.hi[2 * c + k] = __byte_perm(x[2 * k], x[2 * k + 1], 0x7632);
        }
    }
    v.meta = stage[2 * 32 * 4 + lane];
    return v;
}

// value_tiles' m-tiles for B-bit codes: rows of the window's Σ p·v into sO, over its two blocks' words (vw[0]: k-steps
// 0 and 1, vw[1]: 2 and 3; bw: the weights' B fragments a k-step, hi's columns then lo's; z: Σ p·zero of heads 2t,
// 2t + 1).
template <int HB, int B>
__device__ __forceinline__ void value_mtiles(int d, const ValueWords (&vw)[2], const unsigned int (&bw)[4][2], const float (&z)[2],
                                             int g, int t, float* sO) {
    // m-tiles: the low halves hold the run's channels below 16/b, 8/b m-tiles; the high halves the rest.
    constexpr unsigned int mask = ((1u << B) - 1u) * 0x10001u;
    constexpr int b = B, perHalf = 8 / B;
    int tiles = d >> 4;   // d / 16
#pragma unroll
    for (int half = 0; half < 2; half++) {
        unsigned int v[8];
#pragma unroll
        for (int q = 0; q < 8; q++) v[q] = half ? vw[q >> 2].hi[q & 3] : vw[q >> 2].lo[q & 3];
        int m1 = tiles < (half + 1) * perHalf ? tiles : (half + 1) * perHalf;
#pragma unroll 1
        for (int m = half * perHalf; m < m1; m++) {
            float acc[4] = {};
#pragma unroll
            for (int ks = 0; ks < 4; ks++) {
                unsigned int A[4];   // rows g (channel 2m of the run) and g + 8 (2m + 1); tokens 2t, 2t + 1, then + 8
                A[0] = paired_codes_to_half2(v[2 * ks], mask);
                A[1] = paired_codes_to_half2(v[2 * ks] >> b, mask);
                A[2] = paired_codes_to_half2(v[2 * ks + 1], mask);
                A[3] = paired_codes_to_half2(v[2 * ks + 1] >> b, mask);
                mma_m16n8k16_f32_f16(acc, A, bw[ks], acc);
            }
#pragma unroll
            for (int q = 0; q < 8; q++) v[q] >>= 2 * b;
            // acc[j]: channel c (j < 2) or c + 1, column 2t + (j & 1): hi of head 2t + (j & 1) in lanes t < 2, whose
            // lo lane t + 2 holds (xor 2)
            float lo[4];
#pragma unroll
            for (int j = 0; j < 4; j++) lo[j] = __shfl_xor_sync(FULL, acc[j], 2);
            int c = g * (d / 8) + 2 * m;
#pragma unroll
            for (int j = 0; j < 2; j++) {
                if (2 * t + j < HB) {   // hi's columns
                    *reinterpret_cast<float2*>(sO + (2 * t + j) * d + c) =
                        make_float2(acc[j] + lo[j] * (1.0f / 2048.0f) + z[j], acc[2 + j] + lo[2 + j] * (1.0f / 2048.0f) + z[j]);
                }
            }
        }
    }
}

// Lane (g, t)'s B fragments of one block's k-steps 0 and 1 (bw), from the weights p of lane τ's token τ of the block
// and its scale (meta): w = p·scale through kt.score (read by now), [h][τ]; column g < HB: hi of head g's, column
// HB + h: lo·2^11 of head h's. Column g, tokens 16s + 2t, +1 (b[0]) and +8, +9 (b[1]) of step s.
template <int HB>
__device__ __forceinline__ void block_weights(const float* p, unsigned int meta, int lane, const KeyTiles& kt, unsigned int (*bw)[2]) {
    int g = lane >> 2, t = lane & 3;
    float scale = half_lo(meta);
    __syncwarp();
#pragma unroll
    for (int h = 0; h < HB; h++) kt.score[h * TILE_TOKENS + lane] = p[h] * scale;
    __syncwarp();
    const float* w = kt.score + (g & (HB - 1)) * TILE_TOKENS + 2 * t;
#pragma unroll
    for (int ks = 0; ks < 2; ks++) {
#pragma unroll
        for (int r = 0; r < 2; r++) {
            float2 f = *reinterpret_cast<const float2*>(w + 16 * ks + 8 * r);
            __half2 h2 = __floats2half2_rn(f.x, f.y);
            float2 back = __half22float2(h2);
            bw[ks][r] = half2_bits(g < HB ? h2 : __floats2half2_rn((f.x - back.x) * 2048.0f, (f.y - back.y) * 2048.0f));
        }
    }
}

// The window's Σ p·v into sO [head][channel] (HB of d, every lane's part written when it returns) and Σ p a head
// into L (every lane's), over its blocks A and B (pair: the window holds keys of B; else B's weights and words are
// 0). pA, pB: the weights of the lane's token of each block (0 where the window does not hold it), against one
// running max; vw: staged_value_words of A and B.
template <int HB>
__device__ __forceinline__ void value_tiles(const Cache& K, int d, const float* pA, const float* pB, const ValueWords (&vw)[2],
                                            bool pair, int lane, const KeyTiles& kt, float* sO, float (&L)[HB]) {
    static_assert(HB == 4, "B's columns: HB his, then HB los, 8 in all");
    int g = lane >> 2, t = lane & 3, b = K.valueBits;
    unsigned int bw[4][2] = {};
    block_weights<HB>(pA, vw[0].meta, lane, kt, bw);
    if (pair) block_weights<HB>(pB, vw[1].meta, lane, kt, bw + 2);
    // Σ p and Σ p·zero a head, every head in every lane (one reduce-scatter of both).
    float sums[2 * HB];
    float zeroA = half_hi(vw[0].meta), zeroB = half_hi(vw[1].meta);
#pragma unroll
    for (int h = 0; h < HB; h++) {
        sums[h] = pA[h] + pB[h];
        sums[HB + h] = pA[h] * zeroA + pB[h] * zeroB;
    }
    warp_sum_each<2 * HB>(sums, lane);
#pragma unroll
    for (int h = 0; h < HB; h++) L[h] = sums[h];
    // lanes t < 2 store heads 2t, 2t + 1 (selects: an array indexed at run time would go to local memory)
    float z[2] = {t & 1 ? sums[HB + 2] : sums[HB], t & 1 ? sums[HB + 3] : sums[HB + 1]};
    // The m-tiles, with b a constant (its mask and shifts immediates; a runtime mask costs a register copy an A
    // register where registers are short): value_tiles_fit admits 1, 2 and 4.
    if (b == 1) {
        value_mtiles<HB, 1>(d, vw, bw, z, g, t, sO);
    } else if (b == 2) {
        value_mtiles<HB, 2>(d, vw, bw, z, g, t, sO);
    } else {
        value_mtiles<HB, 4>(d, vw, bw, z, g, t, sO);
    }
    __syncwarp();
}
