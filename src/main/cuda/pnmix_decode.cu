// Split-K decode attention (FlashDecoding's scheme): one query per head, at the cache's last position, over every
// cached key, for the packed mixed-precision cache and for an fp16 cache of the same [token][kvHead][headDim]
// rows. CPU twin: org.mechspec.pnmix.CpuPackedCacheOps#decode (attention with one query, not causal). Judged
// against it by the FlashAttention tolerance rule; pnmix.cu's packed_attention_* stay the simple kernels.
//
// Pass 1, *_decode_chunk: block (kvh, chunk) reads keys [chunk·C, min((chunk+1)·C, L)) of KV head kvh once for
//   all Hq/Hkv query heads that share it, a tile of keys at a time through shared memory, with an online softmax.
//   It writes, per query head, the chunk's max logit m, its sum l = Σ exp(s − m) and acc = Σ exp(s − m)·v.
// Pass 2, decode_combine: block h merges its chunks: M = max m, out = Σ acc·exp(m − M) / Σ l·exp(m − M).
// Partials: m, l [Hq][chunks]; acc [Hq][chunks][d]. No bound on L but device memory; every chunk holds a key, so
// no partial is empty, and a −inf max is never subtracted from itself (no NaN from exp(−inf + inf)).
// Shared memory: q and acc [gq][d], one tile of keys or values [tile][d+1] (padded against bank conflicts), the
// tile's scores [gq][tile] and three [gq] arrays; the host picks the tile to fit 48 KiB.
//
// Tolerance (PnMixContracts#cudaSplitKDecodeFlashRule): the FlashAttention rule against the CPU fp64 oracle, with the
// CPU fp32 twin (CpuPackedCacheOps#decodeFp32) as the naive reference for fp32.
//
// Reads (all loads of a tile issued before its barrier; the device copy's layout: CudaCacheCopy):
//   fp16 rows [token][kvHead][headDim] (fp16 cache, packed sink and residual): 16-byte loads of 8 channels, threads
//     side by side on a row, ROWS_IN_FLIGHT rows' loads per thread before any is converted.
//   packed keys, one bit stream per (group, channel), each starting on a 16-byte boundary: one thread per channel
//     decodes the tile's codes from whole 16-byte words in a 64-bit register buffer (shift and mask), the next word
//     loaded before the current one is decoded; bit width, scale and zero once per tile.
//   packed values [group][token][valueGroup][vgBytes]: whole 32-bit words of b-bit codes (b in 1, 2, 4, 8), 32/b
//     channels of one value group per word and one 4-byte scale/zero per word; else one code a thread (get_code).
// No integer division in any loop: each thread's lanes are worked out in the prologue, the segment (sink, group,
// residual) advanced tile by tile (DecodeKernelCodeTest checks the PTX).
#include "packed_cache.cuh"
#include "reductions.cuh"

#ifndef __CUDACC__
// The CPU emulator (g++) only: a barrier is one call site, and the emulator tells two threads at copies of one
// __syncthreads apart (a divergent barrier). Jump threading copies a barrier's block to skip a test it can predict per
// thread (the lanes below are per-thread and loop-invariant), so it is off for this file; nvcc never sees this.
#pragma GCC optimize("no-thread-jumps")
#endif

__device__ __forceinline__ float half_at(const unsigned char* p) {
    return __half2float(__ushort_as_half(load_half(p)));
}

// Sixteen bytes read as one 128-bit load (ld.global.v4.u32 on a GPU): eight fp16 channels of a row. The address
// must be 16-byte aligned: rows are, when the row's channel count and the head dim are multiples of 8 and the
// buffer starts 16-byte aligned (cuMemAlloc's are). A plain struct, so the emulator checks it as one 16-byte access.
#define ROWS_IN_FLIGHT 4

struct __align__(16) Words4 {
    unsigned int w[4];
};

__device__ __forceinline__ float half_lo(unsigned int w) { return __half2float(__ushort_as_half((unsigned short) (w & 0xffffu))); }
__device__ __forceinline__ float half_hi(unsigned int w) { return __half2float(__ushort_as_half((unsigned short) (w >> 16))); }

// Each thread's fixed place in the block's work, worked out once in the kernel's prologue: every division and
// remainder of the kernel is here, none in a loop (DecodeKernelCodeTest checks the PTX for that).
struct Lanes {
    // fp16 rows read 8 channels (16 bytes) per load: vecLanes threads side by side on a row's d/8 vectors, vecRows
    // rows at once; a thread past vecRows·vecLanes reads nothing.
    int vecLanes, vecRows, vecRow, vecCol;
    // Scalar rows (values of quantized groups, fp16 rows whose head dim is not a multiple of 8): one channel a thread.
    int lanes, rows, row, col;
    // Keys of a quantized group: thread (token keyT, channels keyC0, keyC0 + keyCStep, ...).
    int keyT, keyC0, keyCStep;
    // Scores: thread (token scoreT, heads scoreH0, scoreH0 + scoreHStep, ...); tile is a power of two <= blockDim.
    int scoreT, scoreH0, scoreHStep;
    // Output accumulators: thread (channel accC, accC + lanes, ...; heads accH0, accH0 + accHStep, ...).
    int accC, accH0, accHStep;
    // Packed values: the value group of the thread's first channel (kvh·d + col) / gc.
    int valueGroup;
    // Packed values read as 32-bit code words (wordLanes > 0 when b divides 32 and a head's channels and a value
    // group both fill whole words): wordLanes = d·b/32 words a token, wordRows tokens at once; the thread's word
    // starts at channel wordChannel of the head, in value group wordGroup of the token, wordByte bytes into it.
    int wordLanes, wordRows, wordRow, wordCol, wordChannel, wordGroup, wordByte;
};

__device__ __forceinline__ Lanes make_lanes(int d, int tile) {
    Lanes a;
    int tid = threadIdx.x, threads = blockDim.x;
    int dv = d >> 3;
    a.vecLanes = dv < threads ? dv : threads;
    a.vecRows = a.vecLanes > 0 ? threads / a.vecLanes : 0;
    a.vecRow = a.vecLanes > 0 ? tid / a.vecLanes : 0;
    a.vecCol = a.vecLanes > 0 ? tid % a.vecLanes : 0;
    a.lanes = d < threads ? d : threads;
    a.rows = threads / a.lanes;
    a.row = tid / a.lanes;
    a.col = tid % a.lanes;
    a.keyT = tid % tile;
    a.keyC0 = tid / tile;
    a.keyCStep = threads / tile;
    a.scoreT = a.keyT;
    a.scoreH0 = a.keyC0;
    a.scoreHStep = a.keyCStep;
    a.accC = a.col;
    a.accH0 = a.row;
    a.accHStep = a.rows;
    return a;
}

// Rows [from, from + n) of fp16 [token][channels] at src, KV head kvh, into the tile: 16-byte loads when a row's
// channels and the head dim are multiples of 8, else one 2-byte element a thread.
template <typename T>
__device__ void fp16_rows(const unsigned char* __restrict__ src, int channels, T* tile, int stride, int from, int n,
                          int kvh, int d, const Lanes& a) {
    if ((d & 7) == 0 && (channels & 7) == 0) {
        if (a.vecRow >= a.vecRows) return;
        const Words4* rows = reinterpret_cast<const Words4*>(src);
        long rowVecs = channels >> 3;
        long head = (long) kvh * (d >> 3);
        int step = a.vecRows;
        // ROWS_IN_FLIGHT rows' loads issued before any is used: 4 × 16 bytes in flight per thread.
        for (int v = a.vecCol; v < (d >> 3); v += a.vecLanes) {
            for (int t = a.vecRow; t < n; t += ROWS_IN_FLIGHT * step) {
                Words4 x[ROWS_IN_FLIGHT];
#pragma unroll
                for (int u = 0; u < ROWS_IN_FLIGHT; u++) {
                    if (t + u * step < n) x[u] = rows[(long) (from + t + u * step) * rowVecs + head + v];
                }
#pragma unroll
                for (int u = 0; u < ROWS_IN_FLIGHT; u++) {
                    if (t + u * step < n) {
                        T* o = tile + (t + u * step) * stride + 8 * v;
#pragma unroll
                        for (int k = 0; k < 4; k++) {
                            o[2 * k] = (T) half_lo(x[u].w[k]);
                            o[2 * k + 1] = (T) half_hi(x[u].w[k]);
                        }
                    }
                }
            }
        }
        return;
    }
    if (a.row >= a.rows) return;
    for (int c = a.col; c < d; c += a.lanes) {
        for (int t = a.row; t < n; t += a.rows) {
            tile[t * stride + c] = (T) half_at(src + 2 * ((long) (from + t) * channels + kvh * d + c));
        }
    }
}

// Where a tile is in the packed cache: the sink (g = -1), quantized group g (0 <= g < groups) or the residual
// (g = groups), and where that segment ends. Worked out once per block by division, then advanced tile by tile.
struct Segment {
    int g, start, end;
};

// The packed cache (layout: packed_cache.cuh), dequantized in T as it is read. The chunk kernel never lets a tile
// straddle two segments (sink, one quantized group, residual), so a tile's segment and group are uniform across the
// block.
struct PackedRows {
    Cache K;

    __device__ int residual_start() const { return K.sinkLen + K.groups * K.G; }

    __device__ Segment segment_of(int j) const {
        if (j < K.sinkLen) return Segment{-1, 0, K.sinkLen};
        if (j >= residual_start()) return Segment{K.groups, residual_start(), 0x7fffffff};
        int g = (j - K.sinkLen) / K.G;
        return Segment{g, K.sinkLen + g * K.G, K.sinkLen + (g + 1) * K.G};
    }

    // The segment after s (no division: the next group, or the residual after the last).
    __device__ Segment next(const Segment& s) const {
        int g = s.g + 1;
        if (g >= K.groups) return Segment{K.groups, residual_start(), 0x7fffffff};
        return Segment{g, s.end, s.end + K.G};
    }

    // Keys: per-channel bit streams of the group's tokens. One thread per channel decodes the tile's n codes from
    // whole 16-byte words of its stream (the device copy starts every stream on a 16-byte boundary and pads it:
    // CudaCacheCopy#paddedKeyOffsets): codes come out of a 64-bit register buffer by shift and mask, LSB-first as
    // BitPacking writes them, with the channel's bit width, scale and zero read once per tile.
    template <typename T>
    __device__ void keys(T* tile, int stride, int from, int n, int kvh, int d, const Segment& s, const Lanes& a) const {
        if (s.g < 0 || s.g >= K.groups) {
            fp16_rows<T>(s.g < 0 ? K.sinkK : K.resK, K.Hkv * K.d, tile, stride, from - s.start, n, kvh, d, a);
            return;
        }
        if (a.row != 0) return;
        int t0 = from - s.start;
        long base = (long) s.g * (K.Hkv * K.d) + kvh * d;
        for (int c = a.col; c < d; c += a.lanes) {
            int b = K.keyBits[base + c];
            const unsigned char* m = K.keyMeta + 4 * (base + c);
            T zero = (T) half_at(m + 2), step = (T) half_at(m);
            unsigned int mask = (1u << b) - 1u;
            long bit0 = (long) t0 * b;
            const Words4* w = reinterpret_cast<const Words4*>(K.keyCodes + K.keyOffsets[base + c]) + (bit0 >> 7);
            int skip = (int) (bit0 & 127);   // bits of the first word before token t0
            unsigned long long buf = 0;
            int have = 0;
            T* out = tile + c;
            // Words holding the tile's codes; the next one is loaded before the current one is decoded.
            int words = (skip + n * b + 127) >> 7;
            Words4 next = {};
            if (words > 0) next = w[0];
            for (int i = 0, t = 0; t < n; i++) {
                Words4 x = next;
                if (i + 1 < words) next = w[i + 1];
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    buf |= (unsigned long long) x.w[k] << have;   // have < b <= 8 here: no bit is lost
                    have += 32;
                    int drop = skip < have ? skip : have;
                    buf >>= drop;
                    have -= drop;
                    skip -= drop;
                    while (have >= b && t < n) {
                        out[t * stride] = zero + (T) (int) (buf & mask) * step;
                        buf >>= b;
                        have -= b;
                        t++;
                    }
                }
            }
        }
    }

    // Values: per-token groups of gc channels, so threads take a token's channels side by side, as for fp16 rows.
    template <typename T>
    __device__ void values(T* tile, int stride, int from, int n, int kvh, int d, const Segment& s, const Lanes& a) const {
        if (s.g < 0 || s.g >= K.groups) {
            fp16_rows<T>(s.g < 0 ? K.sinkV : K.resV, K.Hkv * K.d, tile, stride, from - s.start, n, kvh, d, a);
            return;
        }
        long token0 = (long) s.g * K.G + (from - s.start);
        if (a.wordLanes > 0) {
            // Whole 32-bit code words: thread (token row wordRow, word wordCol of the head's d·b/32), 32/b channels
            // of one value group per word, so one scale/zero per word; ROWS_IN_FLIGHT tokens' loads issued first.
            if (a.wordRow >= a.wordRows) return;
            int b = K.valueBits;
            int per = 32 >> (b == 1 ? 0 : b == 2 ? 1 : b == 4 ? 2 : 3);   // 32 / b, b in {1, 2, 4, 8}
            unsigned int mask = (1u << b) - 1u;
            const unsigned char* codes = K.valueCodes + a.wordByte;
            int step = a.wordRows;
            for (int t = a.wordRow; t < n; t += ROWS_IN_FLIGHT * step) {
                unsigned int w[ROWS_IN_FLIGHT], m[ROWS_IN_FLIGHT];
#pragma unroll
                for (int u = 0; u < ROWS_IN_FLIGHT; u++) {
                    if (t + u * step < n) {
                        long vg = (token0 + t + u * step) * K.vgroups + a.wordGroup;
                        w[u] = *reinterpret_cast<const unsigned int*>(codes + vg * K.vgBytes);
                        m[u] = *reinterpret_cast<const unsigned int*>(K.valueMeta + 4 * vg);
                    }
                }
#pragma unroll
                for (int u = 0; u < ROWS_IN_FLIGHT; u++) {
                    if (t + u * step < n) {
                        T zero = (T) half_hi(m[u]), scale = (T) half_lo(m[u]);
                        T* o = tile + (t + u * step) * stride + a.wordChannel;
                        unsigned int x = w[u];
                        for (int k = 0; k < per; k++) {
                            o[k] = zero + (T) (int) (x & mask) * scale;
                            x >>= b;
                        }
                    }
                }
            }
            return;
        }
        if (a.row >= a.rows) return;
        // The thread's first channel's value group and index in it, from the block-wide ones by subtraction.
        int ch = kvh * d + a.col;
        int vgi = a.valueGroup, index = ch - a.valueGroup * K.gc;
        for (int c = a.col; c < d; c += a.lanes) {
            for (int t = a.row; t < n; t += a.rows) {
                long vg = (token0 + t) * K.vgroups + vgi;
                int code = get_code(K.valueCodes + vg * K.vgBytes, index, K.valueBits);
                const unsigned char* m = K.valueMeta + 4 * vg;
                tile[t * stride + c] = (T) half_at(m + 2) + (T) code * (T) half_at(m);
            }
            index += a.lanes;
            while (index >= K.gc) {
                index -= K.gc;
                vgi++;
            }
        }
    }
};

// An fp16 cache: keys and values [token][kvHead][headDim], little-endian halves; one segment.
struct Fp16Rows {
    const unsigned char* k;
    const unsigned char* v;
    int channels;
    __device__ Segment segment_of(int) const { return Segment{0, 0, 0x7fffffff}; }
    __device__ Segment next(const Segment& s) const { return s; }
    template <typename T>
    __device__ void keys(T* tile, int stride, int from, int n, int kvh, int d, const Segment&, const Lanes& a) const {
        fp16_rows<T>(k, channels, tile, stride, from, n, kvh, d, a);
    }
    template <typename T>
    __device__ void values(T* tile, int stride, int from, int n, int kvh, int d, const Segment&, const Lanes& a) const {
        fp16_rows<T>(v, channels, tile, stride, from, n, kvh, d, a);
    }
};

template <typename T, typename Rows>
__device__ void decode_chunk(const Rows& R, const T* q, T* partM, T* partL, T* partAcc, int Hq, int Hkv, int L, int d,
                             int chunk, int tile, T scale, int gc, int valueBits) {
    extern __shared__ __align__(16) unsigned char smem_raw[]; // read as double and float: 16-byte aligned
    // Prologue: the block's place and each thread's lanes (every division of the kernel).
    int gq = Hq / Hkv;
    int chunks = (L + chunk - 1) / chunk;
    int kvh = blockIdx.x / chunks;
    int ck = blockIdx.x - kvh * chunks;
    int from = ck * chunk;
    int to = L - from < chunk ? L : from + chunk;
    int stride = d + 1;
    int h0 = kvh * gq;
    Lanes a = make_lanes(d, tile);
    a.valueGroup = gc > 0 ? (kvh * d + a.col) / gc : 0;
    a.wordLanes = 0;
    a.wordRows = a.wordRow = a.wordCol = a.wordChannel = a.wordGroup = a.wordByte = 0;
    if (gc > 0 && (valueBits == 1 || valueBits == 2 || valueBits == 4 || valueBits == 8) && (d * valueBits) % 32 == 0
        && (gc * valueBits) % 32 == 0 && (d * valueBits) / 32 <= (int) blockDim.x) {
        a.wordLanes = d * valueBits / 32;
        a.wordRows = blockDim.x / a.wordLanes;
        a.wordRow = threadIdx.x / a.wordLanes;
        a.wordCol = threadIdx.x % a.wordLanes;
        a.wordChannel = a.wordCol * (32 / valueBits);
        int ch = kvh * d + a.wordChannel;
        a.wordGroup = ch / gc;
        a.wordByte = (ch % gc) * valueBits / 8;
    }
    T* sQ = reinterpret_cast<T*>(smem_raw);   // [gq][d]
    T* sAcc = sQ + gq * d;                     // [gq][d]
    T* sRows = sAcc + gq * d;                  // [tile][d + 1]
    T* sS = sRows + tile * stride;             // [gq][tile]
    T* sM = sS + gq * tile;                    // running max per head
    T* sL = sM + gq;                           // running sum per head
    T* sAlpha = sL + gq;                       // this tile's rescale of acc

    if (a.row < a.rows) {
        for (int h = a.accH0; h < gq; h += a.accHStep) {
            for (int c = a.accC; c < d; c += a.lanes) {
                sQ[h * d + c] = q[((long) h0 + h) * d + c];
                sAcc[h * d + c] = 0;
            }
        }
    }
    for (int h = threadIdx.x; h < gq; h += blockDim.x) {
        sM[h] = -INFINITY;
        sL[h] = 0;
    }
    __syncthreads();
    Segment seg = R.segment_of(from);
    for (int t0 = from, n; t0 < to; t0 += n) {
        if (t0 >= seg.end) seg = R.next(seg);
        int end = seg.end < to ? seg.end : to;
        n = end - t0 < tile ? end - t0 : tile;
        R.template keys<T>(sRows, stride, t0, n, kvh, d, seg, a);
        __syncthreads();
        if (a.scoreT < n) {
            for (int h = a.scoreH0; h < gq; h += a.scoreHStep) {
                const T* qh = sQ + h * d;
                const T* k = sRows + a.scoreT * stride;
                T dot = 0;
                for (int c = 0; c < d; c++) dot += qh[c] * k[c];
                sS[h * tile + a.scoreT] = dot * scale;
            }
        }
        __syncthreads();
        for (int h = threadIdx.x; h < gq; h += blockDim.x) {
            T* s = sS + h * tile;
            T m = sM[h];
            for (int t = 0; t < n; t++) m = s[t] > m ? s[t] : m;
            T alpha = sM[h] == -INFINITY ? (T) 0 : exp_t<T>(sM[h] - m);
            T l = sL[h] * alpha;
            for (int t = 0; t < n; t++) {
                s[t] = exp_t<T>(s[t] - m);
                l += s[t];
            }
            sM[h] = m;
            sL[h] = l;
            sAlpha[h] = alpha;
        }
        __syncthreads();   // the keys are no longer read: the tile takes the values
        R.template values<T>(sRows, stride, t0, n, kvh, d, seg, a);
        __syncthreads();
        if (a.row < a.rows) {
            for (int h = a.accH0; h < gq; h += a.accHStep) {
                const T* s = sS + h * tile;
                for (int c = a.accC; c < d; c += a.lanes) {
                    T acc = sAcc[h * d + c] * sAlpha[h];
                    for (int t = 0; t < n; t++) acc += s[t] * sRows[t * stride + c];
                    sAcc[h * d + c] = acc;
                }
            }
        }
        __syncthreads();
    }
    if (a.row < a.rows) {
        for (int h = a.accH0; h < gq; h += a.accHStep) {
            for (int c = a.accC; c < d; c += a.lanes) {
                partAcc[(((long) h0 + h) * chunks + ck) * d + c] = sAcc[h * d + c];
            }
        }
    }
    for (int h = threadIdx.x; h < gq; h += blockDim.x) {
        partM[(long) (h0 + h) * chunks + ck] = sM[h];
        partL[(long) (h0 + h) * chunks + ck] = sL[h];
    }
}

// One block per query head; every thread folds the chunks in the same order, so they agree on the weights.
template <typename T>
__device__ void decode_combine(const T* partM, const T* partL, const T* partAcc, T* out, int chunks, int d) {
    int h = blockIdx.x;
    const T* m = partM + (long) h * chunks;
    const T* l = partL + (long) h * chunks;
    T M = -INFINITY;
    for (int k = 0; k < chunks; k++) M = m[k] > M ? m[k] : M;
    T denom = 0;
    for (int k = 0; k < chunks; k++) denom += m[k] == -INFINITY ? (T) 0 : l[k] * exp_t<T>(m[k] - M);
    for (int c = threadIdx.x; c < d; c += blockDim.x) {
        T acc = 0;
        for (int k = 0; k < chunks; k++) {
            if (m[k] != -INFINITY) acc += exp_t<T>(m[k] - M) * partAcc[((long) h * chunks + k) * d + c];
        }
        out[(long) h * d + c] = acc / denom;
    }
}

// dims: the packed_attention_* layout (packed_cache.cuh), with Tq = 1 and causal = 0.
#define PACKED_DECODE_KERNEL(NAME, T)                                                                          \
    extern "C" __global__ void NAME(const unsigned char* sinkK, const unsigned char* sinkV,                    \
                                    const unsigned char* resK, const unsigned char* resV,                      \
                                    const unsigned char* keyCodes, const unsigned char* keyMeta,               \
                                    const int* keyBits, const int* keyOffsets,                                 \
                                    const unsigned char* valueCodes, const unsigned char* valueMeta,           \
                                    const int* dims, const T* q, T* partM, T* partL, T* partAcc, int chunk,    \
                                    int tile, T scale) {                                                       \
        PackedRows R{make_cache(sinkK, sinkV, resK, resV, keyCodes, keyMeta, keyBits, keyOffsets, valueCodes,  \
                                valueMeta, dims)};                                                             \
        decode_chunk<T>(R, q, partM, partL, partAcc, dims[0], dims[1], dims[3], dims[4], chunk, tile, scale,  \
                        R.K.gc, R.K.valueBits);                                                                       \
    }

#define FP16_DECODE_KERNEL(NAME, T)                                                                            \
    extern "C" __global__ void NAME(const unsigned char* k, const unsigned char* v, int Hq, int Hkv, int L,    \
                                    int d, const T* q, T* partM, T* partL, T* partAcc, int chunk, int tile,    \
                                    T scale) {                                                                 \
        Fp16Rows R{k, v, Hkv * d};                                                                             \
        decode_chunk<T>(R, q, partM, partL, partAcc, Hq, Hkv, L, d, chunk, tile, scale, 0, 0);                 \
    }

PACKED_DECODE_KERNEL(packed_decode_chunk_f64, double)
PACKED_DECODE_KERNEL(packed_decode_chunk_f32, float)
FP16_DECODE_KERNEL(fp16_decode_chunk_f64, double)
FP16_DECODE_KERNEL(fp16_decode_chunk_f32, float)

extern "C" __global__ void decode_combine_f64(const double* partM, const double* partL, const double* partAcc,
                                              double* out, int chunks, int d) {
    decode_combine<double>(partM, partL, partAcc, out, chunks, d);
}

extern "C" __global__ void decode_combine_f32(const float* partM, const float* partL, const float* partAcc,
                                              float* out, int chunks, int d) {
    decode_combine<float>(partM, partL, partAcc, out, chunks, d);
}
