// Batched grouped-query attention with optional per-key additive bias and causal masking.
// CPU twin: org.mechspec.compute.CpuBackend#attention. Layouts are those of AttentionShape.
// One block per query row. Keys come in tiles of blockDim.x, one score per thread, under an online softmax
// (running max m, sum l and unnormalized output, rescaled by exp(m_old - m_new) as the max grows), so shared
// memory holds 2·blockDim.x + dv elements whatever the key length. Reductions use a fixed tree, so a run is
// deterministic for a given launch configuration.

#include "reductions.cuh"

template <typename T>
__device__ void attention_row(const T* q, const T* k, const T* v, const T* bias, T* out,
                              int Hq, int Hkv, int Tq, int Tk, int d, int dv, T scale, int causal) {
    extern __shared__ __align__(16) unsigned char smem_raw[]; // read as double and float: 16-byte aligned
    T* p = reinterpret_cast<T*>(smem_raw);   // [blockDim.x] this tile's weights
    T* scratch = p + blockDim.x;              // [blockDim.x] reduction tree
    T* acc = scratch + blockDim.x;            // [dv] unnormalized output

    int row = blockIdx.x;                // ((b * Hq + h) * Tq + i)
    int i = row % Tq;
    int h = (row / Tq) % Hq;
    int b = row / (Tq * Hq);
    int kvh = h / (Hq / Hkv);
    long kvBase = ((long) b * Hkv + kvh) * Tk;
    const T* qrow = q + (long) row * d;
    int last = causal ? i + (Tk - Tq) : Tk - 1;

    for (int c = threadIdx.x; c < dv; c += blockDim.x) acc[c] = 0;
    T m = -INFINITY;
    T l = 0;
    for (int t0 = 0; t0 <= last; t0 += blockDim.x) {
        int j = t0 + threadIdx.x;
        T s = -INFINITY;
        if (j <= last) {
            const T* krow = k + (kvBase + j) * d;
            T dot = 0;
            for (int c = 0; c < d; c++) dot += qrow[c] * krow[c];
            s = dot * scale + (bias != nullptr ? bias[kvBase + j] : (T) 0);
        }
        T tileMax = block_reduce<T, true>(s, scratch);
        T mNew = tileMax > m ? tileMax : m;
        T w = j <= last ? exp_t<T>(s - mNew) : (T) 0;
        p[threadIdx.x] = w;
        T alpha = m == -INFINITY ? (T) 0 : exp_t<T>(m - mNew);
        l = l * alpha + block_reduce<T, false>(w, scratch);   // its barriers also publish p
        int n = last + 1 - t0 < (int) blockDim.x ? last + 1 - t0 : (int) blockDim.x;
        for (int c = threadIdx.x; c < dv; c += blockDim.x) {
            T a = acc[c] * alpha;
            for (int t = 0; t < n; t++) a += p[t] * v[(kvBase + t0 + t) * dv + c];
            acc[c] = a;
        }
        __syncthreads();   // p is rewritten by the next tile
        m = mNew;
    }
    T* orow = out + (long) row * dv;
    for (int c = threadIdx.x; c < dv; c += blockDim.x) orow[c] = acc[c] / l;
}

extern "C" __global__ void attention_f32(const float* q, const float* k, const float* v, const float* bias,
                                         float* out, int Hq, int Hkv, int Tq, int Tk, int d, int dv,
                                         float scale, int causal) {
    attention_row<float>(q, k, v, bias, out, Hq, Hkv, Tq, Tk, d, dv, scale, causal);
}

extern "C" __global__ void attention_f64(const double* q, const double* k, const double* v, const double* bias,
                                         double* out, int Hq, int Hkv, int Tq, int Tk, int d, int dv,
                                         double scale, int causal) {
    attention_row<double>(q, k, v, bias, out, Hq, Hkv, Tq, Tk, d, dv, scale, causal);
}
