// Batched grouped-query attention with optional per-key additive bias and causal masking.
// CPU twin: org.mechspec.compute.CpuBackend#attention. Layouts are those of AttentionShape.
// One block per query row; scores live in dynamic shared memory (keyLen + blockDim elements).
// Reductions use a fixed tree, so a run is deterministic for a given launch configuration.

#include "reductions.cuh"

template <typename T>
__device__ void attention_row(const T* q, const T* k, const T* v, const T* bias, T* out,
                              int Hq, int Hkv, int Tq, int Tk, int d, int dv, T scale, int causal) {
    extern __shared__ unsigned char smem_raw[];
    T* scores = reinterpret_cast<T*>(smem_raw);
    T* scratch = scores + Tk;

    int row = blockIdx.x;                // ((b * Hq + h) * Tq + i)
    int i = row % Tq;
    int h = (row / Tq) % Hq;
    int b = row / (Tq * Hq);
    int kvh = h / (Hq / Hkv);
    long kvBase = ((long) b * Hkv + kvh) * Tk;
    const T* qrow = q + (long) row * d;
    int last = causal ? i + (Tk - Tq) : Tk - 1;

    T localMax = -INFINITY;
    for (int j = threadIdx.x; j <= last; j += blockDim.x) {
        const T* krow = k + (kvBase + j) * d;
        T dot = 0;
        for (int c = 0; c < d; c++) dot += qrow[c] * krow[c];
        T s = dot * scale + (bias != nullptr ? bias[kvBase + j] : (T) 0);
        scores[j] = s;
        localMax = s > localMax ? s : localMax;
    }
    T m = block_reduce<T, true>(localMax, scratch);

    T localSum = 0;
    for (int j = threadIdx.x; j <= last; j += blockDim.x) {
        T p = exp_t<T>(scores[j] - m);
        scores[j] = p;
        localSum += p;
    }
    T denom = block_reduce<T, false>(localSum, scratch);

    T* orow = out + (long) row * dv;
    for (int c = threadIdx.x; c < dv; c += blockDim.x) {
        T acc = 0;
        for (int j = 0; j <= last; j++) acc += scores[j] * v[(kvBase + j) * dv + c];
        orow[c] = acc / denom;
    }
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
