// Mixed-precision packed KV cache: group quantization with bit packing, unpacking, dequantization and
// attention that reads the packed cache directly. CPU twin: org.mechspec.pnmix.CpuPackedCacheOps
// (semantics in GroupQuantizer, BitPacking, PackedCacheReader). Codes and metadata must match it bit for bit;
// attention is held to the FlashAttention tolerance rule.
//
// Layouts: a stream of codes puts code i at bits [i*b, (i+1)*b) LSB-first and is padded to a whole byte.
// Per-channel blocks: one stream per channel at offsets[c]. Per-token blocks: one stream per (token, group).
// Metadata: 4 bytes per quantization group, fp16 scale then fp16 zero, little-endian.
#include "packed_cache.cuh"

__device__ __forceinline__ unsigned short to_half_bits(double v) {
    return __half_as_ushort(__double2half(v));   // round to nearest even, straight from double
}

__device__ __forceinline__ void store_half(unsigned char* p, unsigned short h) {
    p[0] = (unsigned char) (h & 0xFF);
    p[1] = (unsigned char) (h >> 8);
}

// The caller owns every byte of the stream: no other thread writes there.
__device__ __forceinline__ void put_code(unsigned char* stream, long index, int bits, int code) {
    long bit = index * bits;
    unsigned char* p = stream + (bit >> 3);
    int shift = (int) (bit & 7);
    unsigned int w = ((unsigned int) code) << shift;
    p[0] |= (unsigned char) (w & 0xFF);
    if (shift + bits > 8) p[1] |= (unsigned char) ((w >> 8) & 0xFF);
}

// Levels of one group, as GroupQuantizer computes them.
struct Levels {
    unsigned short scaleBits;
    unsigned short zeroBits;
    double scale;
    double zero;
    double mean;
    int twoLevel;
    int top;   // 2^b - 1
};

__device__ Levels group_levels(const double* x, long from, long stride, int count, int bits, int oneBitMeans) {
    Levels L;
    L.top = (1 << bits) - 1;
    L.mean = 0.0;
    L.twoLevel = (bits == 1 && oneBitMeans) ? 1 : 0;
    if (L.twoLevel) {
        double sum = 0.0;
        for (int i = 0; i < count; i++) sum = __dadd_rn(sum, x[from + i * stride]);
        double mean = __ddiv_rn(sum, (double) count);
        double lowSum = 0.0, highSum = 0.0;
        int lowCount = 0;
        for (int i = 0; i < count; i++) {
            double v = x[from + i * stride];
            if (v >= mean) {
                highSum = __dadd_rn(highSum, v);
            } else {
                lowSum = __dadd_rn(lowSum, v);
                lowCount++;
            }
        }
        double high = __ddiv_rn(highSum, (double) (count - lowCount));
        if (lowCount == 0) {
            L.zeroBits = to_half_bits(high);
            L.scaleBits = 0;
        } else {
            double low = __ddiv_rn(lowSum, (double) lowCount);
            L.zeroBits = to_half_bits(low);
            L.scaleBits = to_half_bits(__dsub_rn(high, low));
        }
        L.mean = mean;
    } else {
        double mn = x[from], mx = x[from];
        for (int i = 1; i < count; i++) {
            double v = x[from + i * stride];
            if (v < mn) mn = v;   // plain comparisons keep the first of equal values, like the CPU twin
            if (v > mx) mx = v;
        }
        L.scaleBits = to_half_bits(__ddiv_rn(__dsub_rn(mx, mn), (double) L.top));
        L.zeroBits = to_half_bits(mn);
    }
    L.scale = from_half_bits(L.scaleBits);
    L.zero = from_half_bits(L.zeroBits);
    return L;
}

__device__ __forceinline__ int group_code(double v, const Levels& L) {
    if (L.scale == 0.0) return 0;
    if (L.twoLevel) return v >= L.mean ? 1 : 0;
    double r = rint(__ddiv_rn(__dsub_rn(v, L.zero), L.scale));
    r = fmax(0.0, fmin((double) L.top, r));
    return (int) r;
}

__device__ __forceinline__ void store_meta(unsigned char* meta, long group, const Levels& L) {
    store_half(meta + 4 * group, L.scaleBits);
    store_half(meta + 4 * group + 2, L.zeroBits);
}

// ---- pack / unpack -------------------------------------------------------------------------------------

// One thread per channel; codes [tokens][channels].
extern "C" __global__ void pack_per_channel(const int* codes, unsigned char* out, const int* bits, const int* offsets,
                                            int tokens, int channels) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= channels) return;
    unsigned char* s = out + offsets[c];
    for (int k = offsets[c]; k < offsets[c + 1]; k++) out[k] = 0;
    for (int t = 0; t < tokens; t++) put_code(s, t, bits[c], codes[(long) t * channels + c]);
}

// One thread per code.
extern "C" __global__ void unpack_per_channel(const unsigned char* packed, int* codes, const int* bits,
                                              const int* offsets, int tokens, int channels) {
    long e = (long) blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (long) tokens * channels) return;
    int t = (int) (e / channels), c = (int) (e % channels);
    codes[e] = get_code(packed + offsets[c], t, bits[c]);
}

// One thread per (token, channel group).
extern "C" __global__ void pack_per_token(const int* codes, unsigned char* out, int tokens, int channels,
                                          int groupChannels, int bits) {
    long k = (long) blockIdx.x * blockDim.x + threadIdx.x;
    int groups = channels / groupChannels;
    if (k >= (long) tokens * groups) return;
    int gb = stream_bytes(groupChannels, bits);
    unsigned char* s = out + k * gb;
    for (int i = 0; i < gb; i++) s[i] = 0;
    long t = k / groups, g = k % groups;
    for (int i = 0; i < groupChannels; i++) put_code(s, i, bits, codes[t * channels + g * groupChannels + i]);
}

extern "C" __global__ void unpack_per_token(const unsigned char* packed, int* codes, int tokens, int channels,
                                            int groupChannels, int bits) {
    long e = (long) blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (long) tokens * channels) return;
    int groups = channels / groupChannels;
    int gb = stream_bytes(groupChannels, bits);
    long t = e / channels;
    int c = (int) (e % channels);
    codes[e] = get_code(packed + (t * groups + c / groupChannels) * gb, c % groupChannels, bits);
}

// ---- quantize + pack -----------------------------------------------------------------------------------

// One thread per channel: levels over the channel's tokens, metadata, then its own packed stream.
extern "C" __global__ void quantize_per_channel(const double* x, unsigned char* out, unsigned char* meta,
                                                const int* bits, const int* offsets, int tokens, int channels,
                                                int oneBitMeans) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= channels) return;
    Levels L = group_levels(x, c, channels, tokens, bits[c], oneBitMeans);
    store_meta(meta, c, L);
    unsigned char* s = out + offsets[c];
    for (int k = offsets[c]; k < offsets[c + 1]; k++) out[k] = 0;
    for (int t = 0; t < tokens; t++) put_code(s, t, bits[c], group_code(x[(long) t * channels + c], L));
}

// One thread per (token, channel group).
extern "C" __global__ void quantize_per_token(const double* x, unsigned char* out, unsigned char* meta, int tokens,
                                              int channels, int groupChannels, int bits, int oneBitMeans) {
    long k = (long) blockIdx.x * blockDim.x + threadIdx.x;
    int groups = channels / groupChannels;
    if (k >= (long) tokens * groups) return;
    long t = k / groups, g = k % groups;
    long from = t * channels + g * groupChannels;
    Levels L = group_levels(x, from, 1, groupChannels, bits, oneBitMeans);
    store_meta(meta, k, L);
    int gb = stream_bytes(groupChannels, bits);
    unsigned char* s = out + k * gb;
    for (int i = 0; i < gb; i++) s[i] = 0;
    for (int i = 0; i < groupChannels; i++) put_code(s, i, bits, group_code(x[from + i], L));
}

// ---- dequantize ----------------------------------------------------------------------------------------

// zero + code * scale with the group's metadata (fp16 scale, then fp16 zero), rounded as the CPU twin rounds it:
// the product, then the sum. Explicit, so that nvcc's contraction cannot fuse them; today the product is exact (a
// code of at most 8 bits times an 11-bit fp16 significand), so a fused one would round the same, but the
// bit-for-bit claim should not rest on that.
__device__ __forceinline__ double dequantized(int code, const unsigned char* meta) {
    return __dadd_rn(from_half_bits(load_half(meta + 2)), __dmul_rn((double) code, from_half_bits(load_half(meta))));
}

extern "C" __global__ void dequantize_per_channel(const unsigned char* packed, const unsigned char* meta,
                                                  double* out, const int* bits, const int* offsets, int tokens,
                                                  int channels) {
    long e = (long) blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (long) tokens * channels) return;
    int t = (int) (e / channels), c = (int) (e % channels);
    int code = get_code(packed + offsets[c], t, bits[c]);
    out[e] = dequantized(code, meta + 4 * c);
}

extern "C" __global__ void dequantize_per_token(const unsigned char* packed, const unsigned char* meta, double* out,
                                                int tokens, int channels, int groupChannels, int bits) {
    long e = (long) blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= (long) tokens * channels) return;
    int groups = channels / groupChannels;
    int gb = stream_bytes(groupChannels, bits);
    long t = e / channels;
    int c = (int) (e % channels);
    long g = t * groups + c / groupChannels;
    int code = get_code(packed + g * gb, c % groupChannels, bits);
    out[e] = dequantized(code, meta + 4 * g);
}

// ---- attention over the packed cache -------------------------------------------------------------------

#include "reductions.cuh"

// One block per query row (h, i); blockDim a power of two; the logits (scores) and the softmax weights live in global
// memory [Hq][Tq][keyLen], so the key count is not bounded by shared memory. Each weight exp(s - m) / denom is computed
// once per key and read by every output channel. Keys a row may not see get logit -inf.
template <typename T>
__device__ void packed_attention_row(const Cache K, const T* q, T* out, T* scores, T* weights, const int* dims,
                                     T scale) {
    extern __shared__ __align__(16) unsigned char smem_raw[]; // read as double and float: 16-byte aligned
    T* scratch = reinterpret_cast<T*>(smem_raw);
    int Hq = dims[0], Tq = dims[2], L = dims[3], d = dims[4], causal = dims[5];
    int row = blockIdx.x;
    int i = row % Tq;
    int h = row / Tq;
    int kvh = h / (Hq / K.Hkv);
    int last = causal ? i + (L - Tq) : L - 1;
    const T* qrow = q + (long) row * d;
    T* srow = scores + (long) row * L;
    T* wrow = weights + (long) row * L;

    T localMax = -INFINITY;
    for (int j = threadIdx.x; j < L; j += blockDim.x) {
        if (j > last) {
            srow[j] = -INFINITY;
            continue;
        }
        T dot = 0;
        for (int c = 0; c < d; c++) dot += qrow[c] * element<T>(K, j, kvh, c, true);
        T s = dot * scale;
        srow[j] = s;
        localMax = s > localMax ? s : localMax;
    }
    T m = block_reduce<T, true>(localMax, scratch);
    __syncthreads();   // every score of the row is in global memory before anyone reads it back

    T localSum = 0;
    for (int j = threadIdx.x; j <= last; j += blockDim.x) {
        T e = exp_t<T>(srow[j] - m);
        wrow[j] = e;
        localSum += e;
    }
    T denom = block_reduce<T, false>(localSum, scratch);
    for (int j = threadIdx.x; j <= last; j += blockDim.x) wrow[j] = wrow[j] / denom;   // the thread's own keys
    __syncthreads();   // every weight is in global memory before any channel reads them all

    for (int c = threadIdx.x; c < d; c += blockDim.x) {
        T acc = 0;
        for (int j = 0; j <= last; j++) acc += wrow[j] * element<T>(K, j, kvh, c, false);
        out[(long) row * d + c] = acc;
    }
}

// The same kernel in fp64 and fp32: all arithmetic (dequantized levels, dots, softmax, sums) in T.
#define PACKED_ATTENTION_KERNEL(NAME, T)                                                                       \
    extern "C" __global__ void NAME(const unsigned char* sinkK, const unsigned char* sinkV,                    \
                                    const unsigned char* resK, const unsigned char* resV,                      \
                                    const unsigned char* keyCodes, const unsigned char* keyMeta,               \
                                    const int* keyBits, const int* keyOffsets,                                 \
                                    const unsigned char* valueCodes, const unsigned char* valueMeta,           \
                                    const int* dims, const T* q, T* out, T* scores, T* weights, T scale) {     \
        Cache K = make_cache(sinkK, sinkV, resK, resV, keyCodes, keyMeta, keyBits, keyOffsets, valueCodes,     \
                             valueMeta, dims);                                                                 \
        packed_attention_row<T>(K, q, out, scores, weights, dims, scale);                                      \
    }

PACKED_ATTENTION_KERNEL(packed_attention_f64, double)
PACKED_ATTENTION_KERNEL(packed_attention_f32, float)
