// The fp32 split-K decode kernels' tensor-core key scores (pnmix_decode.cu's header says where they fit): a quantized
// group's weights staged once a group (stage_key_weights; the fp16 cache's query by stage_row_weights), then its keys'
// scores a 32-token block at a time (key_tile_scores, or key_pair_scores where its channel pairs share a width), by
// mma.sync m16n8k16 with fp16 operands and fp32 accumulation (warp_ops.cuh); the values in group_tiles.cuh, fp16
// rows' in row_tiles.cuh. Shared with pnmix_decode.cu only; edit it and the SASS fixture must be regenerated
// (sass-counts.py).
#pragma once
#include "packed_cache.cuh"
#include "warp_ops.cuh"

#define TILE_TOKENS 32   // a group's block: the tokens key_tile_scores scores at once (a window holds one or two)
#define SCORE_TOKENS 64  // a row of kt.score: a window's two blocks (key_pair_scores scores both at once)

// ---- Keys of a quantized group on tensor cores (the fp32 packed kernel) ----
// q·k with k = zero + code·scale (the CPU twin's dequantization) is Σ_c q_c·zero_c + Σ_c (q_c·scale_c)·code_c: a
// group's zeros and scales are per channel, so per group and held head the first sum is one number (zsum) and the
// second a product of the keys' codes, exact small integers in fp16 (subnormals, 2^-24 of them: warp_ops.cuh), with
// weights w_c = q_c·scale_c: an mma a 16-channel step (m16n8k16, fp32 accumulation; warp_ops.cuh). fp16 holds 11 bits of w, so w goes in as two halves,
// hi = w rounded to fp16 and lo = (w - hi) rounded, 22 bits: hi in B's columns 0 .. HB - 1 and lo in HB .. 2·HB - 1
// (the HB = 4 held heads fill half of N = 8, so one mma a step does both; their scores are added after the block's
// last step, once a token and head); w is scaled per
// head by a power of two (exact) that puts its largest |w| in [2^14, 2^15): nothing overflows, lo keeps its 11 bits
// for every weight down to 2^-17 of the largest, and a smaller one is off by at most 2^-39 of the largest. Why not dequantize in half2 (zero + code·scale by HFMA2): the key would be rounded
// to 11 bits, far outside the fp32 twin's tolerance; here only w is split, and to 22 bits. The fp64 kernel keeps
// key_scores.
#define KEY_STEP 16   // channels of one mma k-step

// Steps a group's weights are staged for: d/16 rounded up to even, so key_pair_scores takes two an iteration with no
// odd one left over (the channels past d weigh 0; d a multiple of 32, as the bench's, wastes none).
__device__ __forceinline__ int key_steps(int d) { return ((d + 2 * KEY_STEP - 1) >> 5) << 1; }   // d >= 0: shifts

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
    float* score;     // 2·HB × SCORE_TOKENS: the window's scores (score_index; block B from token 32) before unscale
                      // and zsum, then the values' weights' records (window_weights)
    float* unscale;   // [HB]: 2^-e, e the head's scaling exponent
    float* zsum;      // [HB]: Σ_c q_c·zero_c, then (int) the group's key path: 1 for key_pair_scores (stage_weights)
    unsigned int* stage;   // VALUE_STAGE_BYTES: the window's value words (stage_value_words; where d <= 128)
};

// A warp's score, unscale, zsum and key path, of a size that does not depend on d (so their addresses are a constant
// times the warp: cheap where ptxas works them out again in the window loop); a multiple of 16.
__host__ __device__ constexpr int key_score_bytes(int hb) { return 2 * hb * SCORE_TOKENS * 4 + 2 * hb * 4 + 16; }

// The widest key code key_pair_scores takes: a lane's run of eight tokens of a channel, 8b bits, fits the funnel
// shift's 32, and each four of them, 4b bits, a 16-bit half.
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
    // The weights' loop takes a channel pair c, c + 1 a lane (c even; d is even, so both are in or both past d): one
    // word of each B fragment (their halves), 8-byte loads of their meta, widths and offsets (the group's first
    // channel is even).
    unsigned int* frag = reinterpret_cast<unsigned int*>(fragOut);
    const float4* q4 = reinterpret_cast<const float4*>(sQ);   // [channel]: the HB = 4 heads, 16-byte aligned
    int padded = key_steps(d) * KEY_STEP;
    __syncwarp();   // every lane has read the previous group's weights and scores
    // Per head its largest |w| and Σ q·zero, a channel a lane.
    float big[HB] = {}, z[HB] = {};
#pragma unroll 1
    for (int c = lane; c < d; c += 32) {
        unsigned int m = ROWS ? ROW_META : meta[c];
        float4 qc = q4[c];
        float q[HB] = {qc.x, qc.y, qc.z, qc.w};
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
    // half (c & 1) of b[(c & 15) >> 3], t = (c & 7) >> 1, so the pair is word (c & 15) >> 3 of its uint2; channels
    // from d to the last step's end weigh 0. The channels' masks likewise into mask word t of the step.
    bool pairs = true;   // every channel pair (c, c ^ 1) of one width, at most PAIR_MAX_BITS (key_pair_scores)
#pragma unroll 1
    for (int c = 2 * lane; c < padded; c += 64) {
        bool in = c < d;
        uint2 m = !in ? make_uint2(0u, 0u) : ROWS ? make_uint2(ROW_META, ROW_META) : *reinterpret_cast<const uint2*>(meta + c);
        float4 qa = in ? q4[c] : make_float4(0.0f, 0.0f, 0.0f, 0.0f), qb = in ? q4[c + 1] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        float a[HB] = {qa.x, qa.y, qa.z, qa.w}, b[HB] = {qb.x, qb.y, qb.z, qb.w};
        int2 w2 = in && !ROWS ? *reinterpret_cast<const int2*>(bits + c) : make_int2(0, 0);
        if (!ROWS && in) pairs = pairs && w2.x == w2.y && w2.x <= PAIR_MAX_BITS;
        unsigned int* f = frag + ((c >> 4) * KEY_STEP_WORDS(HB) + ((c & 7) >> 1)) * 2 + ((c & 15) >> 3);
        f[2 * HB * 8] = ((1u << w2.y) - 1u) << 16 | ((1u << w2.x) - 1u);
        if constexpr (!ROWS) {   // the pair's offsets and widths: uint2 (c >> 3) & 1 of lane t's uint4s
            uint2* o = reinterpret_cast<uint2*>(reinterpret_cast<uint4*>(fragOut + (c >> 4) * KEY_STEP_WORDS(HB)) + KEY_STEP_CHANNELS(HB)
                                                + ((c & 7) >> 1)) + ((c >> 3) & 1);
            int2 o2 = in ? *reinterpret_cast<const int2*>(offsets + c) : make_int2(0, 0);
            o[0] = make_uint2((unsigned int) o2.x >> 2, (unsigned int) o2.y >> 2);
            o[8] = make_uint2((unsigned int) w2.x, (unsigned int) w2.y);   // 4 uint4 on: the widths
        }
#pragma unroll
        for (int h = 0; h < HB; h++) {
            float wa = a[h] * half_lo(m.x) * up[h], wb = b[h] * half_lo(m.y) * up[h];
            __half2 hi = __floats2half2_rn(wa, wb);
            float2 back = __half22float2(hi);
            __half2 lo = __floats2half2_rn(wa - back.x, wb - back.y);
            f[h * 8] = half2_bits(hi);
            f[(HB + h) * 8] = half2_bits(lo);
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

// Lane (g, t)'s words for key scores (key_tile_scores: a run of RUN = 4 tokens, key_pair_scores: 8): its first
// token, RUN·g on from blk0 (tokens past the group, a last block shorter than 32, read blk0's run instead: in the
// group, and never keys of the window), and step 0's B fragment, channel masks and channels (KEY_STEP_WORDS on a step).
struct KeyLane {
    int tok;
    const uint2* frag;
    const uint2* masks;
    const uint4* channels;

    // On to the next step's words.
    template <int HB>
    __device__ __forceinline__ void next() {
        frag += KEY_STEP_WORDS(HB);
        masks += KEY_STEP_WORDS(HB);
        channels += KEY_STEP_WORDS(HB) / 2;
    }
};

template <int HB, int RUN>
__device__ __forceinline__ KeyLane key_lane(const Cache& K, int blk0, const KeyTiles& kt, int lane) {
    int g = lane >> 2, t = lane & 3;
    return {blk0 + RUN * g < K.G ? blk0 + RUN * g : blk0, kt.frag + g * 4 + t, kt.frag + 2 * HB * 4 + t,
            reinterpret_cast<const uint4*>(kt.frag) + KEY_STEP_CHANNELS(HB) + t};
}

// A step's channels 16s + 2t, +1, +8, +9 of the lane (their stream offsets in words and widths, staged): the widths
// in b and the codes of tok, tok + 1, ... from bit 0 in x (32 bits of the run), one funnel shift of two words a
// channel. Past d their width and offset are 0: words 0 and 1 read, which weigh 0 (stage_key_weights), so no test a channel.
template <bool PAIRS>
__device__ __forceinline__ void step_runs(const unsigned int* words, const uint4* channels, int tok, int (&b)[4],
                                          unsigned int (&x)[4]) {
    uint4 o4 = channels[0], b4 = channels[4];
    unsigned int off[4] = {o4.x, o4.y, o4.z, o4.w};
    b[0] = (int) b4.x;
    b[1] = PAIRS ? b[0] : (int) b4.y;   // PAIRS: a pair's channels share a width, so their runs start at one bit
    b[2] = (int) b4.z;
    b[3] = PAIRS ? b[2] : (int) b4.w;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        int bit = tok * b[j], i = (int) off[j] + (bit >> 5);
        x[j] = __funnelshift_r(words[i], words[i + 1], bit);   // shifts by bit mod 32
    }
}

// Where kt.score keeps window token tok's sum of B's column col (hi's columns 0 .. HB - 1, then lo's): in the mma
// accumulator's order, [col / 2][tok / 2][tok & 1][col & 1], so an m-tile's four sums in a lane (two tokens 2p, 2p + 1
// and columns 2u, 2u + 1) are one float4 (put_scores), and a token's columns 2u, 2u + 1 one float2 (token_scores:
// consecutive lanes, consecutive words).
__device__ __forceinline__ int score_index(int tok, int col) {
    return ((col >> 1) * (SCORE_TOKENS / 2) + (tok >> 1)) * 4 + (tok & 1) * 2 + (col & 1);
}

// Scores from the mma accumulators of MT m-tiles (acc[i][j]: token 2·MT·g + 2i (j < 2) or 2·MT·g + 2i + 1 (j >= 2)
// of the scored tokens, column 2t + (j & 1)) into kt.score from token `at` (even).
template <int MT>
__device__ __forceinline__ void put_scores(const float (&acc)[MT][4], int at, const KeyTiles& kt, int lane) {
    int g = lane >> 2, t = lane & 3;
    __syncwarp();   // every lane has read the previous window's scores
#pragma unroll
    for (int i = 0; i < MT; i++) {
        *reinterpret_cast<float4*>(kt.score + score_index(at + 2 * (MT * g + i), 2 * t)) =
            make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    }
    __syncwarp();
}

// The scores of a window's two blocks, the 64 tokens from blk0 (where the window holds one block, the other's are
// scored and not read), where the group's channel pairs (16s + 2t, +1 and +8, +9) each share one width of at most
// PAIR_MAX_BITS (stage_weights' flag; the bench's adjacent RoPE pairs at 3 and 1 bits), into kt.score's tokens 0 ..
// 63. Four m-tiles: m-tile i's row g is token 8g + 2i, row g + 8 token 8g + 2i + 1, so lane (g, t)'s eight tokens
// are one run of 8b <= 32 bits in each of its channels' streams, one funnel shift of two words a channel as for one
// block (what a step costs once, its loads and their addresses, is spread over 64 tokens, not 32). A pair's runs of
// tokens 0 .. 3 and of 4 .. 7 (the run shifted by 4b) each fit side by side in one word's halves (a PRMT a pair and
// half), and one shift by the pair's width moves both channels on to the next token (the bits shifted from the high
// half into the low one lie above its mask).
template <int HB>
__device__ __forceinline__ void key_pair_scores(const Cache& K, int blk0, int d, const KeyTiles& kt, int lane) {
    const unsigned int* words = reinterpret_cast<const unsigned int*>(K.keyCodes);
    KeyLane k = key_lane<HB, 8>(K, blk0, kt, lane);
    float acc[4][4] = {};
    // Two steps an iteration (key_steps is even): a step's loop overhead and its shared-memory addresses (an
    // immediate apart) are paid once for two.
#pragma unroll 1
    for (int step = 0; step < key_steps(d); step += 2) {
#pragma unroll
    for (int u = 0; u < 2; u++, k.next<HB>()) {
        int b[4];
        unsigned int x[4];
        step_runs<true>(words, k.channels, k.tok, b, x);
        int b01 = b[0], b23 = b[2];
        uint2 m = *k.masks, w = *k.frag;
        unsigned int bw[2] = {w.x, w.y};
#pragma unroll
        for (int half = 0; half < 2; half++) {   // tokens 0 .. 3 of the runs, then 4 .. 7
            unsigned int p01 = __byte_perm(x[0], x[1], 0x5410), p23 = __byte_perm(x[2], x[3], 0x5410);
#pragma unroll
            for (int i = 2 * half; i < 2 * half + 2; i++) {
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
            if (half == 0) {
                x[0] >>= 4 * b01;
                x[1] >>= 4 * b01;
                x[2] >>= 4 * b23;
                x[3] >>= 4 * b23;
            }
        }
    }
    }
    put_scores<4>(acc, 0, kt, lane);
}

// Scores of the 32 tokens of the group's block that starts at token blk0 (the group's channels' widths and offsets
// staged with its weights) for the HB held heads, into kt.score from window token `at`, on tensor cores: D[token][head]
// = Σ_c code[token][c]·w[c][head]. A holds the codes (tokens on M: m-tile i's row g is token 4g + 2i, row g + 8 token
// 4g + 2i + 1, so a lane's four tokens 4g .. 4g + 3 are one run of 4b bits in each of its channels' streams: one
// funnel shift of two words a channel), B the staged weights (hi's heads on N, then lo's; token_scores adds column h
// and column HB + h). Lane (g, t) reads channels 16s + 2t, +1, +8, +9 of
// step s (d even), past d too (weights 0), and tokens as key_lane says.
template <int HB>
__device__ __forceinline__ void key_tile_scores(const Cache& K, int blk0, int d, int at, const KeyTiles& kt, int lane) {
    const unsigned int* words = reinterpret_cast<const unsigned int*>(K.keyCodes);
    KeyLane k = key_lane<HB, 4>(K, blk0, kt, lane);
    float acc[2][4] = {};
#pragma unroll 1
    for (int s = 0; s < key_steps(d); s++, k.next<HB>()) {
        int b[4];
        unsigned int x[4];
        step_runs<false>(words, k.channels, k.tok, b, x);
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
    put_scores<2>(acc, at, kt, lane);
}

// Window token tok's scores for the HB held heads as put_scores (CODES: A held codes, 2^-24 of them) or
// row_tile_scores (fp16 rows as they are) leaves them: hi's column plus lo's, unscaled, plus the zero sum (0 for fp16
// rows). CODE_UNSCALE is its own multiply, not folded into kt.unscale: 2^(24 - e) would overflow for weights past
// 2^117 (e down to -113).
template <int HB, bool CODES>
__device__ __forceinline__ void token_scores(const KeyTiles& kt, int tok, float (&s)[HB]) {
    static_assert(HB == 4, "B's 8 columns: 4 float2 a token");
    float c[2 * HB];
#pragma unroll
    for (int u = 0; u < HB; u++) {
        float2 f = *reinterpret_cast<const float2*>(kt.score + score_index(tok, 2 * u));
        c[2 * u] = f.x;
        c[2 * u + 1] = f.y;
    }
#pragma unroll
    for (int h = 0; h < HB; h++) s[h] = (c[h] + c[HB + h]) * (CODES ? CODE_UNSCALE : 1.0f) * kt.unscale[h] + kt.zsum[h];
}
