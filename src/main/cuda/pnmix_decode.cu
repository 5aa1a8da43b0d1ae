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
// Reads: packed keys are per-channel streams (consecutive tokens are adjacent bits), so neighbouring threads take
// neighbouring tokens of a channel; values and fp16 rows are token-major, neighbouring threads taking neighbouring
// channels. A tile never straddles the sink, a quantized group and the residual.
#include "packed_cache.cuh"
#include "reductions.cuh"

__device__ __forceinline__ float half_at(const unsigned char* p) {
    return __half2float(__ushort_as_half(load_half(p)));
}

// Rows [from, from + n) of fp16 [token][channels] at src, KV head kvh, into the tile. Threads take a row's channels
// side by side (coalesced), several rows at once when a row has fewer channels than the block has threads.
template <typename T>
__device__ void fp16_rows(const unsigned char* src, int channels, T* tile, int stride, int from, int n, int kvh, int d) {
    int lanes = d < (int) blockDim.x ? d : (int) blockDim.x;
    int rows = blockDim.x / lanes;
    int r = threadIdx.x / lanes;
    if (r >= rows) return;
    for (int c = threadIdx.x % lanes; c < d; c += lanes) {
        for (int t = r; t < n; t += rows) {
            tile[t * stride + c] = (T) half_at(src + 2 * ((long) (from + t) * channels + kvh * d + c));
        }
    }
}

// The packed cache (layout: packed_cache.cuh), dequantized in T as it is read. The chunk kernel never lets a tile
// straddle two segments (sink, one quantized group, residual), so a tile's segment and group are uniform across the
// block, and a thread works out its channel's layout once per tile, not per element.
struct PackedRows {
    Cache K;

    __device__ int residual_start() const { return K.sinkLen + K.groups * K.G; }

    // End (exclusive) of the segment holding position j; the residual runs to the end of the cache.
    __device__ int segment_end(int j) const {
        if (j < K.sinkLen) return K.sinkLen;
        if (j >= residual_start()) return 0x7fffffff;
        return K.sinkLen + ((j - K.sinkLen) / K.G + 1) * K.G;
    }

    // Keys: per-channel bit streams of the group's tokens, so neighbouring threads take neighbouring tokens of one
    // channel (adjacent bits) and share its scale and zero.
    template <typename T>
    __device__ void keys(T* tile, int stride, int from, int n, int kvh, int d, int tileKeys) const {
        if (from < K.sinkLen || from >= residual_start()) {
            fp16_rows<T>(from < K.sinkLen ? K.sinkK : K.resK, K.Hkv * K.d, tile, stride,
                         from < K.sinkLen ? from : from - residual_start(), n, kvh, d);
            return;
        }
        int g = (from - K.sinkLen) / K.G;
        int t0 = from - K.sinkLen - g * K.G;
        int t = threadIdx.x % tileKeys;
        if (t >= n) return;
        long base = (long) g * (K.Hkv * K.d) + kvh * d;
        for (int c = threadIdx.x / tileKeys; c < d; c += blockDim.x / tileKeys) {
            int code = get_code(K.keyCodes + K.keyOffsets[base + c], t0 + t, K.keyBits[base + c]);
            const unsigned char* m = K.keyMeta + 4 * (base + c);
            tile[t * stride + c] = (T) half_at(m + 2) + (T) code * (T) half_at(m);
        }
    }

    // Values: per-token groups of gc channels, so threads take a token's channels side by side, as for fp16 rows.
    template <typename T>
    __device__ void values(T* tile, int stride, int from, int n, int kvh, int d, int) const {
        if (from < K.sinkLen || from >= residual_start()) {
            fp16_rows<T>(from < K.sinkLen ? K.sinkV : K.resV, K.Hkv * K.d, tile, stride,
                         from < K.sinkLen ? from : from - residual_start(), n, kvh, d);
            return;
        }
        int g = (from - K.sinkLen) / K.G;
        long token0 = (long) g * K.G + (from - K.sinkLen - g * K.G);
        int lanes = d < (int) blockDim.x ? d : (int) blockDim.x;
        int rows = blockDim.x / lanes;
        int r = threadIdx.x / lanes;
        if (r >= rows) return;
        for (int c = threadIdx.x % lanes; c < d; c += lanes) {
            int ch = kvh * d + c;
            int vgi = ch / K.gc;
            int index = ch % K.gc;
            for (int t = r; t < n; t += rows) {
                long vg = (token0 + t) * K.vgroups + vgi;
                int code = get_code(K.valueCodes + vg * K.vgBytes, index, K.valueBits);
                const unsigned char* m = K.valueMeta + 4 * vg;
                tile[t * stride + c] = (T) half_at(m + 2) + (T) code * (T) half_at(m);
            }
        }
    }
};

// An fp16 cache: keys and values [token][kvHead][headDim], little-endian halves; one segment.
struct Fp16Rows {
    const unsigned char* k;
    const unsigned char* v;
    int channels;
    __device__ int segment_end(int) const { return 0x7fffffff; }
    template <typename T>
    __device__ void keys(T* tile, int stride, int from, int n, int kvh, int d, int) const {
        fp16_rows<T>(k, channels, tile, stride, from, n, kvh, d);
    }
    template <typename T>
    __device__ void values(T* tile, int stride, int from, int n, int kvh, int d, int) const {
        fp16_rows<T>(v, channels, tile, stride, from, n, kvh, d);
    }
};

template <typename T, typename Rows>
__device__ void decode_chunk(const Rows& R, const T* q, T* partM, T* partL, T* partAcc, int Hq, int Hkv, int L, int d,
                             int chunk, int tile, T scale) {
    extern __shared__ __align__(16) unsigned char smem_raw[]; // read as double and float: 16-byte aligned
    int gq = Hq / Hkv;
    int chunks = (L + chunk - 1) / chunk;
    int kvh = blockIdx.x / chunks;
    int ck = blockIdx.x % chunks;
    int from = ck * chunk;
    int to = L - from < chunk ? L : from + chunk;
    int stride = d + 1;
    int h0 = kvh * gq;
    T* sQ = reinterpret_cast<T*>(smem_raw);   // [gq][d]
    T* sAcc = sQ + gq * d;                     // [gq][d]
    T* sRows = sAcc + gq * d;                  // [tile][d + 1]
    T* sS = sRows + tile * stride;             // [gq][tile]
    T* sM = sS + gq * tile;                    // running max per head
    T* sL = sM + gq;                           // running sum per head
    T* sAlpha = sL + gq;                       // this tile's rescale of acc

    for (int e = threadIdx.x; e < gq * d; e += blockDim.x) {
        sQ[e] = q[(long) h0 * d + e];
        sAcc[e] = 0;
    }
    for (int h = threadIdx.x; h < gq; h += blockDim.x) {
        sM[h] = -INFINITY;
        sL[h] = 0;
    }
    __syncthreads();
    for (int t0 = from, n; t0 < to; t0 += n) {
        int end = R.segment_end(t0);
        end = end < to ? end : to;
        n = end - t0 < tile ? end - t0 : tile;
        R.template keys<T>(sRows, stride, t0, n, kvh, d, tile);
        __syncthreads();
        for (int p = threadIdx.x; p < gq * n; p += blockDim.x) {
            int h = p / n, t = p % n;
            T dot = 0;
            for (int c = 0; c < d; c++) dot += sQ[h * d + c] * sRows[t * stride + c];
            sS[h * tile + t] = dot * scale;
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
        R.template values<T>(sRows, stride, t0, n, kvh, d, tile);
        __syncthreads();
        for (int p = threadIdx.x; p < gq * d; p += blockDim.x) {
            int h = p / d, c = p % d;
            T acc = sAcc[p] * sAlpha[h];
            for (int t = 0; t < n; t++) acc += sS[h * tile + t] * sRows[t * stride + c];
            sAcc[p] = acc;
        }
        __syncthreads();
    }
    for (int p = threadIdx.x; p < gq * d; p += blockDim.x) {
        int h = p / d, c = p % d;
        partAcc[((long) (h0 + h) * chunks + ck) * d + c] = sAcc[p];
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
        decode_chunk<T>(R, q, partM, partL, partAcc, dims[0], dims[1], dims[3], dims[4], chunk, tile, scale);  \
    }

#define FP16_DECODE_KERNEL(NAME, T)                                                                            \
    extern "C" __global__ void NAME(const unsigned char* k, const unsigned char* v, int Hq, int Hkv, int L,    \
                                    int d, const T* q, T* partM, T* partL, T* partAcc, int chunk, int tile,    \
                                    T scale) {                                                                 \
        Fp16Rows R{k, v, Hkv * d};                                                                             \
        decode_chunk<T>(R, q, partM, partL, partAcc, Hq, Hkv, L, d, chunk, tile, scale);                       \
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
