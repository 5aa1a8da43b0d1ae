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

typedef __half half;

// Two halves, 4-byte aligned as CUDA declares __half2 (so a half2 load is one checked 4-byte access).
struct alignas(4) __half2 {
    __half x, y;
};
typedef __half2 half2;

__device__ __forceinline__ __half2 __halves2half2(__half low, __half high) { return __half2{low, high}; }
__device__ __forceinline__ __half __low2half(__half2 h) { return h.x; }
__device__ __forceinline__ __half __high2half(__half2 h) { return h.y; }
__device__ __forceinline__ float __low2float(__half2 h) { return __half2float(h.x); }
__device__ __forceinline__ float __high2float(__half2 h) { return __half2float(h.y); }
__device__ __forceinline__ float2 __half22float2(__half2 h) { return float2{__half2float(h.x), __half2float(h.y)}; }
__device__ __forceinline__ __half2 __floats2half2_rn(float low, float high) {
    return __half2{__float2half_rn(low), __float2half_rn(high)};
}
__device__ __forceinline__ __half2 __float22half2_rn(float2 f) { return __floats2half2_rn(f.x, f.y); }
