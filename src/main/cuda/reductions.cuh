// Device helpers shared by the attention kernels: precision-generic exp and a fixed-tree block reduction
// (a fixed tree keeps a launch deterministic for a given block size).
#pragma once

template <typename T> __device__ T exp_t(T x);
template <> __device__ inline float exp_t<float>(float x) { return expf(x); }
template <> __device__ inline double exp_t<double>(double x) { return exp(x); }

// blockDim.x must be a power of two; scratch holds blockDim.x elements.
template <typename T, bool IS_MAX>
__device__ T block_reduce(T v, T* scratch) {
    int tid = threadIdx.x;
    scratch[tid] = v;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            T other = scratch[tid + stride];
            scratch[tid] = IS_MAX ? (other > scratch[tid] ? other : scratch[tid]) : scratch[tid] + other;
        }
        __syncthreads();
    }
    T result = scratch[0];
    __syncthreads();
    return result;
}
