// Stand-in for CUDA's cuda_fp16.h when a .cu file is compiled for the CPU emulator: __half is 16-bit storage
// with the conversions the project's kernels use (no half arithmetic). Conversions round to nearest even.
#pragma once
#include "emu_float16.h"

struct __half {
    unsigned short __x;
};

__device__ __forceinline__ __half __double2half(double x) {
    return __half{(unsigned short) emu_fp::round_from_double<5, 10>(x)};
}
// float -> double is exact, so this rounds once as well.
__device__ __forceinline__ __half __float2half(float x) { return __double2half((double) x); }
__device__ __forceinline__ __half __float2half_rn(float x) { return __double2half((double) x); }
__device__ __forceinline__ float __half2float(__half h) { return (float) emu_fp::to_double<5, 10>(h.__x); }
__device__ __forceinline__ unsigned short __half_as_ushort(__half h) { return h.__x; }
__device__ __forceinline__ __half __ushort_as_half(unsigned short u) { return __half{u}; }
