// Split-K decode attention (FlashDecoding's scheme): one query per head, at the cache's last position, over every
// cached key, for the packed mixed-precision cache and for an fp16 cache of the same [token][kvHead][headDim]
// rows. CPU twin: org.mechspec.pnmix.CpuPackedCacheOps#decode (attention with one query, not causal). Judged
// against it by the FlashAttention tolerance rule; pnmix.cu's packed_attention_* stay the simple kernels.
//
// *_decode_chunk, one launch a call: block (kvh, k) of 4 warps reads keys [starts[k], starts[k + 1]) (the host's split) of
//   KV head kvh once for the query heads that share it (HEADS_F32 / HEADS_F64 of them at a time, what fits 128
//   registers without spills; a larger group walks the chunk again for its next heads). Warp-level, no K or V in
//   shared memory:
//   - Warp w walks the w-th quarter of the chunk (so the warps stream four stretches at once) in windows of at most
//     32 keys that never straddle a segment (sink, one quantized group, residual) nor, in a group, a 32-token block;
//     where the fp32 kernel takes a group's values on tensor cores, a group's window is up to two consecutive blocks
//     (64 keys; group_pair_window), and the quarters' inner ends move on to the next pair of the groups' blocks; where
//     the fp32 fp16-cache kernel takes its rows on tensor cores, its windows are up to 64 rows (rows_pair_window).
//   - Lanes per key: a team of R = d/8 lanes (rounded up to a power of two) holds one key, each lane 8 channels, the
//     width of one 16-byte load of fp16; a warp holds 32/R keys at once. The held query heads are staged in shared
//     memory once a pass ([channel][HEADS], zero past the pass's heads, so a channel's heads are one vector load)
//     and read into registers where used (fp16 rows: once a window; the packed cache's rows:
//     once a key); the team's online softmax (running max m, sum l) and the lane's 8 channels of acc per head stay
//     in registers for the whole chunk. Why lanes per key and not a warp per key: a 16-byte load is 8 channels, so
//     a warp-wide dot of d = 32 or 64 would leave lanes idle or split loads; with R lanes the score of a key is a
//     log2(R)-step __shfl_xor_sync sum inside the team (team_sum: five unrolled steps, those at or past R adding
//     nothing, so no branch), and every lane of every team is busy.
//   - A quantized group's window, fp32 kernel: on tensor cores (key_tiles.cuh, group_tiles.cuh; mma.sync m16n8k16, fp16 operands,
//     fp32 accumulation), the window's one or two 32-token blocks of the group at once (key_pair_scores, where the
//     group's channel pairs share their widths; else a block at a time, key_tile_scores). Keys: q·k = Σ q·zero
//     + Σ code·(q·scale)
//     with the group's per-channel scales and zeros, so the codes are A as they are (exact small integers, masked
//     into fp16 subnormals, code·2^-24, codes_to_half2: no conversion instruction) and the weights q·scale, staged once a
//     group with the channels' masks (stage_key_weights), are B, split hi + lo into two fp16 (22 bits: hi in B's
//     first HB columns, lo in the other HB, one mma a step). Values (value_tiles, where a value group is a whole
//     head): Σ p·v = Σ code·(p·scale) + Σ p·zero with the key's one scale and zero, so again the codes are A and the
//     weights p·scale (hi, lo·2^11, on B's columns the same way) B, both blocks of a window's 4 k-steps into one
//     accumulator; Σ p and Σ p·zero each lane's share (its tokens'), summed over the warp where the state leaves
//     this layout. The value rows are copied into shared memory by cp.async before the keys (stage_value_words) and
//     read after them. While a warp is in groups, its running state is held in value_tiles' layout (tile_state,
//     untile_state: lane (g, t) holds head t's channels of every m-tile as the mma's accumulators), so the values'
//     mma add into the state itself, window after window, in registers. The window's softmax runs once between the
//     keys and the values: where a score rises above the state's max (one vote; rare once the max has settled) the
//     window's max per head over the warp raises it, and each key weighs 2^(s − m) in lane τ (block token τ). The
//     m-tiles are unrolled for one code width: a kernel a width, packed_decode_chunk_f32_b1, _b2, _b4 (the host picks
//     by the cache). Why not dequantize in half2 and multiply there: the key or value would be rounded to 11 bits,
//     far outside the fp32 twin's tolerance; only the weights are split, to 22 bits.
//   - A quantized group's window, fp64 kernel (and packed_decode_chunk_f32, for caches whose values are not on tensor
//     cores: a value group not a whole head, codes not 1, 2 or 4 bits, d not a power of two from 16 to 128; there the
//     keys still go on tensor cores where d is even): a lane holds a key (key_scores): lane τ sums q·k of block
//     token τ channel by channel, in index order as the CPU twin does, each code taken from the two words that hold
//     its first bit by one funnel shift and dequantized as the twin does; the values by teams, as rows, each key's
//     weight taken by shuffle from the lane that holds it.
//   - Rows of the fp16 cache, fp32 kernel (d a multiple of 16): on tensor cores as a group's window, up to 64 keys
//     (rows_pair_window, row_tiles.cuh): the query staged once a pass as the weights (stage_row_weights: scale
//     1, zero 0), fp16 K and V exact in A (K's channel pairs and V's key pairs, by PRMT), one softmax a window.
//   - Rows otherwise (the fp64 kernels, the packed cache's sink and residual, other d): per key one exp2 per head: a
//     larger score rescales the running state (only then), a smaller one is weighted.
//   - At the end of the chunk the teams of a warp merge by __shfl_xor_sync, the 4 warps through shared memory
//     after one __syncthreads (each pass of heads also starts with one, after staging its query). It writes, per
//     query head, the chunk's max logit m, its sum l = Σ 2^(s − m) and acc = Σ 2^(s − m)·v, logits s in log2 units
//     (q·k · scale · log2 e).
// Then, in the same launch (a second one would cost a launch gap), the last block of KV head kvh to finish merges
//   its heads' chunks (merge_if_last, chunk_merge.cuh): every thread fences its partial writes, the block counts itself in done[kvh]
//   (atomicAdd), and the block that counts last sets done[kvh] back to 0 for the next call (every block has
//   counted) and runs merge_chunks, one warp per query head of the group (heads w, w + 4, ...). merge_chunks:
//   lanes take chunks k, k + 32, ...; M = max m and Σ l·2^(m − M) by __shfl_xor_sync, then each chunk's weight
//   broadcast by __shfl_sync to the lanes, which own the output channels (1, 2, 4 or 8 a lane: one copy of the merge
//   each, picked by d), a group of chunks' loads issued together; out = Σ acc·2^(m − M) / Σ l·2^(m − M).
//   Fixed orders throughout, whichever block is last: a rerun gives the same bits. Plain loads after the fence:
//   this SM has not read the partials before in this launch, so its L1 holds no stale copy of them.
// Partials: m, l [Hq][chunks]; acc [Hq][chunks][merge_row(d)] (d of each row written). No bound on L but device
// memory; every chunk holds a key, so no partial is empty, and a −inf max is never subtracted from itself (an empty
// team or warp weighs 0).
// Shared memory: the fp32 kernels' scores a warp (KeyTiles: the block's scores, then the values' weights), the
// warps' m, l and acc [4][heads held][d + 2], the pass's query heads [d][HEADS_F32 or _F64], and in the fp32 kernels
// the warps' staged steps (a group's weights and channel masks, or the query as fp16 rows' weights) and in the fp32
// packed kernel, where d ≤ 128, their value words' stages; d ≤ 256 (CudaSplitKDecode checks).
//
// Tolerance (PnMixContracts#cudaSplitKDecodeFlashRule): the FlashAttention rule against the CPU fp64 oracle, with the
// CPU fp32 twin (CpuPackedCacheOps#decodeFp32) as the naive reference for fp32.
//
// Reads (the device copy's layout: CudaCacheCopy), each straight into registers, K and V of a key issued together:
//   fp16 rows [token][kvHead][headDim] (fp16 cache, packed sink and residual): one 16-byte load of 8 channels per
//     lane and key, K and V; else (head dim or channels not a multiple of 8) 2-byte loads.
//   packed keys, one bit stream per (group, channel), each starting on a 16-byte boundary and padded: tensor cores,
//     per lane and channel of a step the two 4-byte words from the one that holds its four tokens' codes (4b <= 32
//     bits), the channel pairs' widths and offsets as 8-byte loads; a lane a key, per lane (a token) and channel the
//     two words from the one that holds its code's first bit, the channel's bit width, stream offset and scale/zero
//     the same in every lane, four channels' as one 16-byte load each.
//   packed values [group][token][valueGroup][vgBytes]: tensor cores, a token's row copied to shared memory by cp.async
//     (LDGSTS, 16 bytes at a time where the row allows), then per lane and token one 4-byte word holding its run of
//     d/8 channels; teams, the lane's 8 channels as one 32-bit
//     code word (b in 1, 2, 4, a value group of whole
//     words) with its 4-byte scale/zero, VALUE_KEYS(T) keys a team loaded before any is used; else one code a
//     channel (get_code).
// No integer division in any loop: the lanes are worked out in the prologue, the segment advanced window by window
// (DecodeKernelCodeTest checks the PTX).
// Not yet measured on a GPU. DecodeIssueModel (src/test) models it from the SASS counted per key (src/main/cuda/sass-counts.py,
// fixtures/sass; gpu.md, "Decode model"); edit this file or one it includes and that script's fixture must be
// regenerated (SassFixtureTest compares their SHA-256s).
// Files: this one has the windows and decode_chunk's walk; decode_state.cuh the lanes' places and the running state
// (Online, and its layout in value_tiles: tile_state, untile_state); decode_caches.cuh the caches as rows and segments
// (PackedRows, Fp16Rows); key_tiles.cuh, group_tiles.cuh and row_tiles.cuh the tensor-core keys, values and fp16 rows;
// chunk_merge.cuh the merge.
#include "packed_cache.cuh"
#include "reductions.cuh"
#include "warp_ops.cuh"
#include "key_tiles.cuh"
#include "group_tiles.cuh"
#include "row_tiles.cuh"

#ifndef __CUDACC__
// The CPU emulator (g++) only: a barrier is one call site, and the emulator tells two threads at copies of one
// __syncthreads apart (a divergent barrier). Jump threading copies a barrier's block to skip a test it can predict per
// thread, so it is off for this file and what it includes after this (the merge's barriers); nvcc never sees this.
#pragma GCC optimize("no-thread-jumps")
#endif
#include "chunk_merge.cuh"
#include "decode_state.cuh"
#include "decode_caches.cuh"

#define WARPS 4          // blockDim.x = 128 (CudaSplitKDecode.THREADS)
#define WINDOW 32        // keys a warp takes at a time: one a lane where a lane holds a key
static_assert(WINDOW == TILE_TOKENS, "a quantized group's window is one or two tensor-core blocks (key_tiles.cuh)");
#define HEADS_F32 4      // query heads held in registers per pass (CudaSplitKDecode.headsHeld)
#define HEADS_F64 1
// Packed values a team has in flight (group_window): 8 in fp32, 4 in fp64 (8 spills at 128 registers there).
#define VALUE_KEYS(T) (sizeof(T) == 4 ? 8 : 4)

// Sum over the R lanes of a team (xor butterfly, offsets R/2 down to 1: every lane of the team gets the same bits).
// Unrolled over the five offsets a warp has, each step's add kept only where it is below R (the same in every lane): no
// loop and no branch a key and head, where a loop over R's offsets cost a compare and a branch a step.
template <typename T>
__device__ __forceinline__ T team_sum(T x, int R) {
#pragma unroll
    for (int step = 16; step > 0; step >>= 1) {
        T y = __shfl_xor_sync(FULL, x, step);
        x = step < R ? x + y : x;
    }
    return x;
}

// The lane's 8 channels of each held query head, from shared memory ([channel][HB], zero past the pass's heads):
// where d is a multiple of 8 they lie side by side, 16-byte aligned, and are read as vectors.
template <typename T, int HB>
__device__ __forceinline__ void query_slice(const T* sQ, int d, const Lanes& a, T (&q)[HB][VEC]) {
    int c0 = VEC * a.r;
    if ((d & 7) == 0) {
        T x[VEC * HB];
#pragma unroll
        for (int i = 0; i < VEC * HB; i++) x[i] = 0;
        if (c0 < d) {
#pragma unroll
            for (int i = 0; i < 2 * HB; i++) load4(sQ + c0 * HB + 4 * i, x + 4 * i);
        }
#pragma unroll
        for (int h = 0; h < HB; h++) {
#pragma unroll
            for (int k = 0; k < VEC; k++) q[h][k] = x[k * HB + h];
        }
        return;
    }
#pragma unroll
    for (int h = 0; h < HB; h++) {
#pragma unroll
        for (int k = 0; k < VEC; k++) q[h][k] = c0 + k < d ? sQ[(c0 + k) * HB + h] : (T) 0;
    }
}

// The warp's window [j0, j0 + n) of fp16 rows: the warp's P teams take keys j0 + team, j0 + team + P, ...
template <typename T, int HB, typename Rows>
__device__ __forceinline__ void rows_window(const Rows& R, const Segment& seg, int j0, int n, int kvh, int d, T log2e_scale,
                                            const T* sQ, Online<T, HB>& st, const Lanes& a) {
    T q[HB][VEC];   // the lane's 8 channels of each held head, in registers for the window (or the key)
    if (!Rows::QUERY_PER_KEY) query_slice<T, HB>(sQ, d, a, q);
    for (int i = 0; i < n; i += a.P) {   // the same trip count in every lane: the shuffles meet
        if (Rows::QUERY_PER_KEY) query_slice<T, HB>(sQ, d, a, q);
        int t = i + a.team;
        bool valid = t < n;
        // K and V of the key loaded together, before either is used.
        Words4 kw = {}, vw = {};
        if (valid) {
            kw = R.key_row(seg, j0 + t, kvh, d, a);
            vw = R.value_row(seg, j0 + t, kvh, d, a);
        }
        T kx[VEC];
        widen<T>(kw, kx);
        T s[HB];
#pragma unroll
        for (int h = 0; h < HB; h++) {
            T dot = 0;
#pragma unroll
            for (int k = 0; k < VEC; k++) dot += q[h][k] * kx[k];
            s[h] = team_sum(dot, a.R) * log2e_scale;
        }
        if (valid) {
            T vx[VEC];
            widen<T>(vw, vx);
            st.add(s, vx);
        }
    }
}

// One channel of a key for the lane's token (tok: its place in the group): its code from the channel's stream (word
// offset off/4, b bits a code), dequantized (zero + code·step, as the CPU twin), times each held head's query
// element qc, added to s. Branch-free, no load conditional: the two words from the one that holds the code's first
// bit are read whether or not the code runs into the second (which then lies in the stream's padding, the next
// stream or the array's tail, CudaCacheCopy.KEY_CODE_TAIL), and b = 0 reads a word it masks off.
template <typename T, int HB>
__device__ __forceinline__ void key_channel(const unsigned int* __restrict__ words, int tok, int b, int off,
                                            unsigned int meta, const T* qc, T* s) {
    int bit = tok * b, i = (off >> 2) + (bit >> 5);
    unsigned int code = __funnelshift_r(words[i], words[i + 1], bit) & ((1u << b) - 1u);   // shifts by bit mod 32
    T kx = (T) half_hi(meta) + (T) (int) code * (T) half_lo(meta);
#pragma unroll
    for (int h = 0; h < HB; h++) s[h] += qc[h] * kx;
}

// Keys of a quantized group, a lane a token: s = q·k of token tok of the group for each held head, summed channel
// by channel in index order (as the CPU twin sums), so a key's score needs no shuffle. A channel's bit width, stream
// offset and scale/zero are the same in every lane (one transaction each), and so are its query elements (sQ is
// [channel][HB], a channel's heads side by side: a shared-memory broadcast); both are read four channels at a time
// where d is a multiple of 4 (16-byte aligned then: the arrays are allocations of their own, base and c multiples
// of 4).
template <typename T, int HB>
__device__ __forceinline__ void key_scores(const Cache& K, int base, int tok, int d, const T* sQ, T (&s)[HB]) {
#pragma unroll
    for (int h = 0; h < HB; h++) s[h] = 0;
    const unsigned int* words = reinterpret_cast<const unsigned int*>(K.keyCodes);
    if ((d & 3) == 0) {
        const uint4* bits = reinterpret_cast<const uint4*>(K.keyBits + base);
        const uint4* offs = reinterpret_cast<const uint4*>(K.keyOffsets + base);
        const uint4* metas = reinterpret_cast<const uint4*>(K.keyMeta + 4 * base);
        const T* qc = sQ;   // channel c's heads (a pointer carried, not sQ's shared address worked out again a channel)
#pragma unroll 1
        for (int c = 0; c < d; c += 4, qc += 4 * HB) {
            uint4 b = bits[c >> 2], o = offs[c >> 2], m = metas[c >> 2];
            T q[4 * HB];   // channels c .. c + 3, each with its HB heads
#pragma unroll
            for (int i = 0; i < HB; i++) load4(qc + 4 * i, q + 4 * i);
            key_channel<T, HB>(words, tok, (int) b.x, (int) o.x, m.x, q, s);
            key_channel<T, HB>(words, tok, (int) b.y, (int) o.y, m.y, q + HB, s);
            key_channel<T, HB>(words, tok, (int) b.z, (int) o.z, m.z, q + 2 * HB, s);
            key_channel<T, HB>(words, tok, (int) b.w, (int) o.w, m.w, q + 3 * HB, s);
        }
    } else {   // d not a multiple of 4: one channel at a time
#pragma unroll 1
        for (int c = 0; c < d; c++) {
            key_channel<T, HB>(words, tok, K.keyBits[base + c], K.keyOffsets[base + c],
                               reinterpret_cast<const unsigned int*>(K.keyMeta)[base + c], sQ + c * HB, s);
        }
    }
}

// The warp's window [j0, j0 + n) of quantized group seg.g, inside one 32-token block of the group (e = j0's place in
// it), where the values are not on tensor cores (fp64; packed_decode_chunk_f32: group_pair_window
// takes the others). Keys: block token τ's scores end in lane τ (key_tile_scores on tensor cores where d is even, or
// key_scores, lane τ scoring token τ). Then the window's softmax, and the values by the teams as in rows_window,
// VALUE_KEYS(T) keys a team at a time, each weight by shuffle from the lane that holds its key.
template <typename T, int HB>
__device__ __forceinline__ void group_window(const PackedRows& R, const Segment& seg, int j0, int n, int kvh, int d, T log2e_scale,
                                             const T* sQ, Online<T, HB>& st, const Lanes& a, const KeyTiles& kt) {
    const Cache& K = R.K;
    int t0 = j0 - seg.start, e = t0 & 31;
    int base = seg.g * (K.Hkv * K.d) + kvh * d;   // int: the stream offsets are ints (CudaCacheCopy)
    T sl[HB];
    bool holds = a.lane >= e && a.lane < e + n;   // lane e + t holds key t of the window
    bool scored = false;
    if constexpr (sizeof(T) == 4) {
        if (a.keyTiles) {
            // The block's 32 scores on tensor cores (the group's weights staged by decode_chunk); lane τ takes token τ's.
            key_tile_scores<HB>(K, t0 - e, d, 0, kt, a.lane);
            token_scores<HB, true>(kt, a.lane, sl);
            scored = true;
        }
    }
    if (!scored) {
        // Lanes whose block token the window does not hold score its first key instead (in the group: no read past it).
        key_scores<T, HB>(K, base, t0 + (holds ? a.lane - e : 0), d, sQ, sl);
    }
    // The window's softmax once, not a key at a time in every lane of a team: its max per head (xor shuffles over
    // the lanes that hold its keys), every team's running state raised to it (Online::raise_to), then each key's
    // weight 2^(s - m) worked out in the lane that holds the key, against the max of the team that takes it (key t:
    // team t mod P, lanes from (t mod P)·R). The teams take the weights by shuffle.
    T wm[HB], pk[HB];
#pragma unroll
    for (int h = 0; h < HB; h++) {
        sl[h] = holds ? sl[h] * log2e_scale : (T) -INFINITY;
        wm[h] = sl[h];
    }
    warp_max_each<HB>(wm, a.lane);
    st.raise_to(wm);
    int taker = ((a.lane - e) & (a.P - 1)) * a.R;
#pragma unroll
    for (int h = 0; h < HB; h++) {
        T m = __shfl_sync(FULL, st.m[h], taker);
        pk[h] = holds ? exp2_t<T>(sl[h] - m) : (T) 0;
    }
    // Values: VK keys a team at a time, their code words and scales/zeros loaded before any is used. When a.wordPath,
    // the lane's 8 channels of a token are 8·b bits of one aligned 32-bit code word (a value group is whole words),
    // beside its value group's scale/zero; the window's first token's are worked out once, the others a stride of
    // words on (no 64-bit multiply a key).
    long vg0 = ((long) seg.g * K.G + t0) * K.vgroups + a.vg;
    const unsigned int* codeWords = reinterpret_cast<const unsigned int*>(K.valueCodes + vg0 * K.vgBytes + (a.wordByte & ~3));
    const unsigned int* metaWords = reinterpret_cast<const unsigned int*>(K.valueMeta) + vg0;
    int codeStride = K.vgroups * K.vgBytes / 4, metaStride = K.vgroups, codeShift = 8 * (a.wordByte & 3);
    constexpr int VK = VALUE_KEYS(T);
    for (int i0 = 0; i0 < n; i0 += VK * a.P) {
        unsigned int codes[VK], metas[VK];
#pragma unroll
        for (int v = 0; v < VK; v++) {
            int t = i0 + v * a.P + a.team;
            codes[v] = metas[v] = 0;
            // Lanes past the head (d/8 not a power of two) read nothing: their results are discarded, and the last
            // token's word would lie past valueCodes.
            if (t < n && a.wordPath && VEC * a.r < d) {
                codes[v] = codeWords[t * codeStride] >> codeShift;
                metas[v] = metaWords[t * metaStride];
            }
        }
#pragma unroll
        for (int v = 0; v < VK; v++) {
            int i = i0 + v * a.P;
            if (i >= n) break;   // the same in every lane: the shuffles meet
            int t = i + a.team;
            bool valid = t < n;
            unsigned int code = codes[v], meta = metas[v];
            T p[HB];
#pragma unroll
            for (int h = 0; h < HB; h++) p[h] = __shfl_sync(FULL, pk[h], (e + t) & 31);
            if (valid && !a.wordPath) {
#pragma unroll
                for (int h = 0; h < HB; h++) st.l[h] += p[h];
                R.value_codes<T, HB>(st, p, seg, j0 + t, d, a);   // the slow path, code by code
            } else if (valid) {
                T vx[VEC];
                {
                    T zero = (T) half_hi(meta), step = (T) half_lo(meta);
                    unsigned int mask = (1u << K.valueBits) - 1u;
#pragma unroll
                    for (int k = 0; k < VEC; k++) {
                        vx[k] = zero + (T) (int) (code & mask) * step;
                        code >>= K.valueBits;
                    }
                }
                st.weigh(p, vx);
            }
        }
    }
}

// A window of one or two blocks (lane τ holds block token τ's scores sA, sB where holdsA, holdsB): its max per head
// raises the running state once, and each key's weight 2^(s - m) against its max, into pA, pB (0 where the lane holds
// no key). TILED: the state in value_tiles' layout, the warp's (Online::raise_tiles), whose max every lane holds: the
// window's max is reduced over the warp only where a lane's score rises above it (one vote; once the max has settled
// that is rare, about ln n of n windows, and a window that does not rise leaves the state as it was, as raise_tiles
// would); else every team's is raised (Online::raise_to) and the weights are against team 0's max, which takes the
// window (take_window).
template <int HB, bool TILED>
__device__ __forceinline__ void pair_weights(float (&sA)[HB], float (&sB)[HB], bool holdsA, bool holdsB, float log2e_scale,
                                             Online<float, HB>& st, int lane, float (&pA)[HB], float (&pB)[HB]) {
    float wm[HB];
#pragma unroll
    for (int h = 0; h < HB; h++) {
        sA[h] = holdsA ? sA[h] * log2e_scale : -INFINITY;
        sB[h] = holdsB ? sB[h] * log2e_scale : -INFINITY;
        wm[h] = larger(sA[h], sB[h]);
    }
    if constexpr (TILED) {
        if (__any_sync(FULL, st.rises_to(wm))) {   // rare: the window's max over the warp, the state raised to it
            warp_max_each<HB>(wm, lane);
            st.raise_tiles(wm, lane & 3);
        }
    } else {
        warp_max_each<HB>(wm, lane);
        st.raise_to(wm);
    }
#pragma unroll
    for (int h = 0; h < HB; h++) {
        float m = TILED ? st.m[h] : __shfl_sync(FULL, st.m[h], 0);   // else team 0 takes every key
        pA[h] = holdsA ? ex2_ftz(sA[h] - m) : 0.0f;
        pB[h] = holdsB ? ex2_ftz(sB[h] - m) : 0.0f;
    }
}

// Team 0 takes a window: l += Σ p (L), and its lanes' 8 channels of each head from sO (lanes past d: none).
template <int HB>
__device__ __forceinline__ void take_window(Online<float, HB>& st, const float (&L)[HB], const float* sO, int d, const Lanes& a) {
    if (a.team == 0) {
#pragma unroll
        for (int h = 0; h < HB; h++) {
            st.l[h] += L[h];
            if (VEC * a.r < d) {
                float o[VEC];
                load4(sO + h * d + VEC * a.r, o);
                load4(sO + h * d + VEC * a.r + 4, o + 4);
#pragma unroll
                for (int k = 0; k < VEC; k++) st.acc[h][k] += o[k];
            }
        }
    }
}

// The warp's window [j0, j0 + n) of quantized group seg.g where the fp32 kernel takes keys and values on tensor cores
// (the _bB kernels): one 32-token block of the group, or two consecutive ones (A from e = j0's place in its block, then
// B from its start), one softmax for both. The scores of both blocks at once where the group's channel pairs share
// their widths (key_pair_scores: a step's loads serve 64 tokens), else a block at a time (key_tile_scores); block
// token τ's score then ends in lane τ, A's and B's. The state is in value_tiles' layout (tile_state): the window's
// max over both blocks raises it once (Online::raise_tiles), each key weighs 2^(s - m) against it, and value_tiles
// adds the window's Σ p·v into its accumulators (B-bit codes), Σ p into l. Why two blocks: what a window costs once
// (the max, the rescale, the sums) is spread over up to 64 keys; the m-tiles take both blocks' 4 k-steps at once.
template <int HB, int B>
__device__ __forceinline__ void group_pair_window(const PackedRows& R, const Segment& seg, int j0, int n, int kvh, int d,
                                                  float log2e_scale, Online<float, HB>& st, const Lanes& a, const KeyTiles& kt,
                                                  unsigned int* stage) {
    const Cache& K = R.K;
    int t0 = j0 - seg.start, e = t0 & 31, blk = t0 - e;
    int nA = n < 32 - e ? n : 32 - e, nB = n - nA;   // nB > 0: the window goes on into the next block
    bool holdsA = a.lane >= e && a.lane < e + nA, holdsB = a.lane < nB;
    // The blocks' value words first, into the warp's stage: in flight during the keys.
    stage_value_words(K, seg.g, blk, kvh, a.lane, stage);
    __pipeline_commit();
    if (*reinterpret_cast<const int*>(kt.zsum + HB)) {   // the group's pairs fit key_pair_scores (stage_weights)
        key_pair_scores<HB>(K, blk, d, kt, a.lane);
    } else {
#pragma unroll 1
        for (int i = 0; i < (nB > 0 ? 2 : 1); i++) key_tile_scores<HB>(K, blk + 32 * i, d, 32 * i, kt, a.lane);
    }
    float sA[HB], sB[HB];
    token_scores<HB, true>(kt, a.lane, sA);
    token_scores<HB, true>(kt, 32 + a.lane, sB);   // not the window's where nB == 0 (pair_weights: not held)
    float pA[HB], pB[HB];
    pair_weights<HB, true>(sA, sB, holdsA, holdsB, log2e_scale, st, a.lane, pA, pB);
    __pipeline_wait_prior(0);
    __syncwarp();   // every lane's copies done: a lane reads others' rows
    ValueWords vw[2] = {staged_value_words(stage, d, B, a.lane),   // B's weigh 0 where nB == 0
                        staged_value_words(stage + VALUE_STAGE_BLOCK_WORDS, d, B, a.lane)};
    value_tiles<HB, B>(d, pA, pB, vw, a.lane, kt, &st.acc[0][0], st.l, st.z);
}

// The warp's window [j0, j0 + n) of an fp16 cache's rows where the fp32 kernel takes them on tensor cores
// (a.rowTiles): as group_pair_window, one or two 32-key blocks (A: the window's first 32 keys,
// B: the rest), one softmax for both, with the rows for the codes (row_tile_scores, a block at a time, against the
// query staged as the weights; row_value_tiles).
template <int HB, typename Rows>
__device__ __forceinline__ void rows_pair_window(const Rows& R, const Segment& seg, int j0, int n, int kvh, int d, float log2e_scale,
                                                 Online<float, HB>& st, const Lanes& a, const KeyTiles& kt, float* sO) {
    int nA = n < 32 ? n : 32, nB = n - nA;
    long rowBytes = R.row_bytes();
    const unsigned char* k0 = R.key_rows(seg, j0, kvh, d);
    float sA[HB] = {}, sB[HB] = {};
#pragma unroll 1
    for (int blk = 0; blk < (nB > 0 ? 2 : 1); blk++) {
        row_tile_scores<HB>(k0 + 32 * blk * rowBytes, rowBytes, blk ? nB : nA, d, kt.frag, kt.score, a.lane);
        float s[HB];
        token_scores<HB, false>(kt, a.lane, s);
#pragma unroll
        for (int h = 0; h < HB; h++) {
            if (blk == 0) {
                sA[h] = s[h];
            } else {
                sB[h] = s[h];
            }
        }
    }
    float pA[HB], pB[HB], L[HB];
    pair_weights<HB, false>(sA, sB, a.lane < nA, a.lane < nB, log2e_scale, st, a.lane, pA, pB);
    row_value_tiles<HB>(R.value_rows(seg, j0, kvh, d), rowBytes, n, d, pA, pB, nB > 0, a.lane, kt, sO, L);
    take_window<HB>(st, L, sO, d, a);
}

// A rows segment's stretch [j0, end) of the warp's walk in rows_pair_window's windows (up to `most` keys): a loop of
// its own, so the SASS count finds a rows window apart from the window loop's other paths (sass-counts.py).
template <int HB, typename Rows>
__device__ __forceinline__ void rows_stretch(const Rows& R, const Segment& seg, int j0, int end, int most, int kvh, int d,
                                             float log2e_scale, Online<float, HB>& st, const Lanes& a, const KeyTiles& kt, float* sO) {
    for (int j = j0, n; j < end; j += n) {   // rows windows
        n = end - j < most ? end - j : most;
        rows_pair_window<HB>(R, seg, j, n, kvh, d, log2e_scale, st, a, kt, sO);
    }
}

// Fp16Rows has no quantized group.
template <typename T, int HB>
__device__ __forceinline__ void group_window(const Fp16Rows&, const Segment&, int, int, int, int, T, const T*,
                                             Online<T, HB>&, const Lanes&, const KeyTiles&) {}

// VB: the value code width whose quantized groups go on tensor cores (value_tiles; 1, 2 or 4: a kernel a width, so
// that a window's m-tiles are unrolled for one width only), or 0 for none.
template <typename T, int HB, int VB, typename Rows>
__device__ void decode_chunk(const Rows& R, const T* q, T* partM, T* partL, T* partAcc, T* out, unsigned int* done, int Hq,
                             int Hkv, int d, const int* starts, int chunks, int tile, T scale, int gc, int valueBits) {
    extern __shared__ __align__(16) unsigned char smem_raw[]; // read as double and float: 16-byte aligned
    // Prologue: the block's place and the lane's (every division of the kernel).
    int gq = Hq / Hkv;
    T log2e_scale = scale * (T) 1.4426950408889634;   // scores in log2 units (exp2_t)
    int kvh = blockIdx.x / chunks;
    int ck = blockIdx.x - kvh * chunks;
    int row = merge_row(d);   // a chunk's acc row in partAcc (d of it written)
    int from = starts[ck];   // the host's split (ChunkSplit): every chunk holds a key
    int to = starts[ck + 1];
    int window = tile < WINDOW ? tile : WINDOW;
    int pairWindow = tile < 2 * WINDOW ? tile : 2 * WINDOW;   // group_pair_window's: two 32-token blocks
    Lanes a;
    a.lane = threadIdx.x & 31;
    a.warp = threadIdx.x >> 5;
    a.R = 1;
    while (VEC * a.R < d && a.R < 32) a.R <<= 1;
    a.P = 32 / a.R;
    a.team = a.lane / a.R;
    a.r = a.lane - a.team * a.R;
    a.vec = (d & 7) == 0 && ((Hkv * d) & 7) == 0;
    int ch0 = kvh * d + VEC * a.r;
    a.vg = gc > 0 ? ch0 / gc : 0;
    a.vgIndex = gc > 0 ? ch0 - a.vg * gc : 0;
    a.wordByte = a.vgIndex * valueBits >> 3;   // non-negative: a shift
    a.wordPath = gc > 0 && (valueBits == 1 || valueBits == 2 || valueBits == 4) && (gc * valueBits) % 32 == 0 && gc % VEC == 0
                 && (d & 7) == 0;
    a.keyTiles = sizeof(T) == 4 && Rows::GROUPS && (d & 1) == 0;
    // A quantized group's values on tensor cores: the _bB kernels, which CudaSplitKDecode.chunkKernel launches only
    // where the cache's values fit value_tiles (B bits); they have no other path for a group (group_window beside the
    // pair windows took them past 128 registers, spilling).
    constexpr bool valueTiles = VB > 0;
    // Rows on tensor cores in the fp16 cache's kernel only: in the packed one (its sink and residual) the tiles beside
    // the groups' take it past 128 registers (ptxas spilled 68 to 160 bytes of the prologue's values, reloaded in the
    // key loop too, in every arrangement tried), so its rows stay on rows_window.
    a.rowTiles = sizeof(T) == 4 && !Rows::GROUPS && row_tiles_fit(d);
    // Shared memory (CudaSplitKDecode#sharedBytes): in the fp32 packed kernel first the warps' scores (KeyTiles:
    // key_score_bytes a warp, a constant, a multiple of 16: what follows stays aligned); then per warp w and held
    // head h (hs = HB: a pass's heads past its hb are zero queries whose sums are never written; sized for all HB, so
    // no address depends on the group's size) m, l [WARPS][hs] and acc [WARPS][hs][d]; then the pass's query heads
    // [d][HB] (zero past the pass's hb); then in the fp32 packed kernel the warps' staged steps (key_frag_bytes a
    // warp). Every address here is a few instructions from d and the warp: ptxas works them out again where they are
    // used rather than keep them in registers, so those the window loop uses most (scores, acc) come first, at a
    // constant or a multiple of d.
    constexpr int hs = HB;
    constexpr bool tensorKeys = sizeof(T) == 4;   // key tiles: a group's or fp16 rows'
    constexpr int scoreBytes = tensorKeys ? WARPS * key_score_bytes(HB) : 0;
    T* sM = reinterpret_cast<T*>(smem_raw + scoreBytes);
    T* sL = sM + WARPS * hs;
    T* sAcc = sL + WARPS * hs;
    T* sQ = sAcc + WARPS * hs * d;
    KeyTiles kt = {};
    if constexpr (tensorKeys) {
        kt.score = reinterpret_cast<float*>(smem_raw + a.warp * key_score_bytes(HB));
        kt.unscale = kt.score + 2 * HB * SCORE_TOKENS;
        kt.zsum = kt.unscale + HB;
        unsigned char* frags = reinterpret_cast<unsigned char*>(sQ + d * HB);
        kt.frag = reinterpret_cast<uint2*>(frags + a.warp * key_frag_bytes(d, HB));
        // in the packed kernel where d <= 128 (the _bB kernels'), the warps' value stages (VALUE_STAGE_BYTES a warp)
        // after the frags
        if (Rows::GROUPS) kt.stage = reinterpret_cast<unsigned int*>(frags + WARPS * key_frag_bytes(d, HB) + a.warp * VALUE_STAGE_BYTES);
    }

    // Warp w walks [wfrom, wto), the w-th quarter of the chunk in whole windows: the four warps stream four
    // stretches at once (in a packed cache, four groups' key streams, not four quarters of one group's).
    int span = (to - from + WARPS * WINDOW - 1) / (WARPS * WINDOW) * WINDOW;
    int wfrom = from + a.warp * span;
    int wto = to - wfrom < span ? to : wfrom + span;
    if constexpr (Rows::GROUPS) {
        // Windows of two blocks (group_pair_window): the warps' inner ends moved on to the next pair of blocks of
        // the groups (64 tokens on from the sink; the same function on both sides of an end, so the stretches still
        // tile the chunk), so a stretch's windows are whole pairs where the groups' are.
        if (valueTiles) {
            if (a.warp > 0) wfrom = R.pair_start(wfrom) < to ? R.pair_start(wfrom) : to;
            if (a.warp < WARPS - 1) wto = R.pair_start(wto) < to ? R.pair_start(wto) : to;
        }
    }
    int first = R.segment_index(wfrom < to ? wfrom : from);   // by division: here, not in the loops

    for (int h0 = 0; h0 < gq; h0 += HB) {
        int hb = gq - h0 < HB ? gq - h0 : HB;
        long head0 = (long) kvh * gq + h0;   // first query head of this pass
        // The pass's query heads into shared memory (the previous pass read it before its last barrier): each
        // window reads what it needs into registers, so the query takes no registers across the walk.
        for (int i = threadIdx.x; i < HB * d; i += blockDim.x) {
            int c = i / HB, h = i - c * HB;   // HB a power of two: shifts
            sQ[i] = h < hb ? q[(head0 + h) * d + c] : (T) 0;
        }
        __syncthreads();
        KeyTiles queryTiles = kt;   // the fp16 cache's kernel: the query's weights warp 0 stages, read by every warp
        if constexpr (tensorKeys && !Rows::GROUPS) {
            if (a.rowTiles) {
                // Once a pass and block (every warp's rows weigh the same query), by warp 0 into its key tiles; the
                // previous pass's last barrier is past every warp's reads of them.
                queryTiles.frag = reinterpret_cast<uint2*>(sQ + d * HB);
                queryTiles.unscale = reinterpret_cast<float*>(smem_raw) + 2 * HB * SCORE_TOKENS;
                queryTiles.zsum = queryTiles.unscale + HB;
                if (a.warp == 0) stage_row_weights<HB>(d, reinterpret_cast<const float*>(sQ), kt.frag, kt.unscale, kt.zsum, a.lane);
                __syncthreads();
            }
        }
        Online<T, HB> st;
        st.clear();
        // Windows of at most `window` keys, never across a segment's end.
        Segment seg = R.segment_at(first);
        // st in value_tiles' layout (tile_state) while the warp is in groups' pair windows; a clear state is the same
        // in both layouts, so a stretch that starts in a group (most do) starts tiled, with no tile_state
        bool tiled = valueTiles;
        int staged = -1;   // the group whose key weights kt holds (tensorKeys), for this pass's heads
        for (int j0 = wfrom, n; j0 < wto; j0 += n) {
            while (j0 >= seg.end) seg = R.next(seg);
            int end = seg.end < wto ? seg.end : wto;
            if constexpr (tensorKeys && !Rows::GROUPS) {
                if (a.rowTiles) {
                    // The warp's rows, [j0, end) (all of its stretch: one segment), on tensor cores against the query
                    // staged as the weights.
                    rows_stretch<HB>(R, seg, j0, end, pairWindow, kvh, d, log2e_scale, st, a, queryTiles,
                                     reinterpret_cast<float*>(sAcc) + a.warp * hs * d);
                    n = end - j0;
                    continue;
                }
            }
            bool pairs = !R.rows(seg) && valueTiles;
            if constexpr (VB > 0) {
                if (pairs != tiled) {   // rare: at most twice a stretch, out of groups' pair windows before rows, in after
                    if (pairs) {
                        tile_state<HB, VB>(st, d, sAcc + a.warp * hs * d, a);
                    } else {
                        untile_state<HB, VB>(st, d, sAcc + a.warp * hs * d, a);
                    }
                    tiled = pairs;
                }
            }
            int most = pairs ? pairWindow : window;
            n = end - j0 < most ? end - j0 : most;
            // A quantized group's window stays inside one 32-token block of the group (group_window), or two
            // consecutive ones (group_pair_window).
            if (!R.rows(seg)) {
                int room = (pairs ? 64 : 32) - ((j0 - seg.start) & 31);
                n = room < n ? room : n;
            }
            if (R.rows(seg)) {
                rows_window<T, HB>(R, seg, j0, n, kvh, d, log2e_scale, sQ, st, a);
            } else {
                if constexpr (tensorKeys && Rows::GROUPS) {
                    if (a.keyTiles && seg.g != staged) {
                        int base = seg.g * (R.K.Hkv * d) + kvh * d;   // the group's and KV head's first channel
                        stage_key_weights<HB>(reinterpret_cast<const unsigned int*>(R.K.keyMeta) + base, R.K.keyBits + base,
                                              R.K.keyOffsets + base, d, reinterpret_cast<const float*>(sQ), kt.frag, kt.unscale,
                                              kt.zsum, a.lane);
                        staged = seg.g;
                    }
                }
                if constexpr (VB > 0) {
                    if (pairs) {
                        group_pair_window<HB, VB>(R, seg, j0, n, kvh, d, log2e_scale, st, a, kt, kt.stage);
                        continue;
                    }
                }
                if constexpr (VB == 0) {   // the _bB kernels' groups are all pair windows (the host's choice)
                    group_window<T, HB>(R, seg, j0, n, kvh, d, log2e_scale, sQ, st, a, kt);
                }
            }
        }
        if constexpr (VB > 0) {
            if (tiled) untile_state<HB, VB>(st, d, sAcc + a.warp * hs * d, a);
        }
        // The warp's teams merged (lanes r, r + R, ... hold the same channels), then the warps through shared memory.
        for (int o = a.R; o < 32; o <<= 1) st.merge_xor(o, hb);
        if (a.team == 0) {
#pragma unroll
            for (int h = 0; h < HB; h++) {
                if (h >= hb) break;
                if (a.r == 0) {
                    sM[a.warp * hs + h] = st.m[h];
                    sL[a.warp * hs + h] = st.l[h];
                }
#pragma unroll
                for (int k = 0; k < VEC; k++) {
                    int c = VEC * a.r + k;
                    if (c < d) sAcc[(a.warp * hs + h) * d + c] = st.acc[h][k];
                }
            }
        }
        __syncthreads();
        for (int h = 0; h < hb; h++) {
            T M = -INFINITY;
            for (int w = 0; w < WARPS; w++) M = sM[w * hs + h] > M ? sM[w * hs + h] : M;
            T wt[WARPS];
#pragma unroll
            for (int w = 0; w < WARPS; w++) wt[w] = sM[w * hs + h] == -INFINITY ? (T) 0 : exp2_t<T>(sM[w * hs + h] - M);
            long p = (head0 + h) * chunks + ck;
            if (threadIdx.x == 0) {
                T l = 0;
#pragma unroll
                for (int w = 0; w < WARPS; w++) l += sL[w * hs + h] * wt[w];
                partM[p] = M;
                partL[p] = l;
            }
            for (int c = threadIdx.x; c < d; c += blockDim.x) {
                T acc = 0;
#pragma unroll
                for (int w = 0; w < WARPS; w++) acc += sAcc[(w * hs + h) * d + c] * wt[w];
                partAcc[p * row + c] = acc;
            }
        }
    }
    if (row == 32) {
        merge_if_last<T, 1>(partM, partL, partAcc, out, done, sM, kvh, gq, chunks, d, WARPS);
    } else if (row == 64) {
        merge_if_last<T, 2>(partM, partL, partAcc, out, done, sM, kvh, gq, chunks, d, WARPS);
    } else if (row == 128) {
        merge_if_last<T, 4>(partM, partL, partAcc, out, done, sM, kvh, gq, chunks, d, WARPS);
    } else {
        merge_if_last<T, 8>(partM, partL, partAcc, out, done, sM, kvh, gq, chunks, d, WARPS);
    }
}

// dims: the packed_attention_* layout (packed_cache.cuh), with Tq = 1 and causal = 0.
#define PACKED_DECODE_KERNEL(NAME, T, HB, VB)                                                                      \
    extern "C" __global__ void __launch_bounds__(128, 4) NAME(const unsigned char* sinkK, const unsigned char* sinkV,                    \
                                    const unsigned char* resK, const unsigned char* resV,                      \
                                    const unsigned char* keyCodes, const unsigned char* keyMeta,               \
                                    const int* keyBits, const int* keyOffsets,                                 \
                                    const unsigned char* valueCodes, const unsigned char* valueMeta,           \
                                    const int* dims, const T* q, T* partM, T* partL, T* partAcc, T* out,       \
                                    unsigned int* done, const int* starts, int chunks, int tile, T scale) {    \
        PackedRows R{make_cache(sinkK, sinkV, resK, resV, keyCodes, keyMeta, keyBits, keyOffsets, valueCodes,  \
                                valueMeta, dims)};                                                             \
        decode_chunk<T, HB, VB>(R, q, partM, partL, partAcc, out, done, dims[0], dims[1], dims[4], starts, chunks, \
                            tile, scale, R.K.gc, R.K.valueBits);                                               \
    }

#define FP16_DECODE_KERNEL(NAME, T, HB)                                                                        \
    extern "C" __global__ void __launch_bounds__(128, 4) NAME(const unsigned char* k, const unsigned char* v, int Hq, int Hkv,           \
                                    int d, const T* q, T* partM, T* partL, T* partAcc, T* out,                 \
                                    unsigned int* done, const int* starts, int chunks, int tile, T scale) {    \
        Fp16Rows R{k, v, Hkv * d};                                                                             \
        decode_chunk<T, HB, 0>(R, q, partM, partL, partAcc, out, done, Hq, Hkv, d, starts, chunks, tile, scale, 0, 0); \
    }

// The fp32 packed kernel a value code width (CudaSplitKDecode picks by the cache's): _b1, _b2, _b4 take a quantized
// group's values on tensor cores (only where they fit: CudaSplitKDecode.chunkKernel); packed_decode_chunk_f32 never does.
PACKED_DECODE_KERNEL(packed_decode_chunk_f64, double, HEADS_F64, 0)
PACKED_DECODE_KERNEL(packed_decode_chunk_f32, float, HEADS_F32, 0)
PACKED_DECODE_KERNEL(packed_decode_chunk_f32_b1, float, HEADS_F32, 1)
PACKED_DECODE_KERNEL(packed_decode_chunk_f32_b2, float, HEADS_F32, 2)
PACKED_DECODE_KERNEL(packed_decode_chunk_f32_b4, float, HEADS_F32, 4)
FP16_DECODE_KERNEL(fp16_decode_chunk_f64, double, HEADS_F64)
FP16_DECODE_KERNEL(fp16_decode_chunk_f32, float, HEADS_F32)
