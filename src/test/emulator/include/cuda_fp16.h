// Stand-in for CUDA's cuda_fp16.h when a .cu file is compiled for the CPU emulator: __half is 16-bit storage
// with the conversions the project's kernels use, and __half2 arithmetic (add, subtract, multiply, fused
// multiply-add), each correctly rounded once to nearest even, as CUDA documents them.
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

// a·b + c rounded once to fp16. a·b is exact in double (two 11-bit significands). Either the product is below 2^-22
// of an fp16 ulp of the result, and the sum sits far from any tie between two halves, or its 22 significant bits
// and c's 11 span at most 53 bits, and the double sum is exact: either way one rounding to fp16 is the correct one.
inline unsigned short emu_half_fma(double a, double b, double c) {
    return (unsigned short) emu_fp::round_from_double<5, 10>(fma(a, b, c));
}
inline double emu_half_value(__half h) { return emu_fp::to_double<5, 10>(h.__x); }

__device__ __forceinline__ __half __hfma(__half a, __half b, __half c) {
    return __half{emu_half_fma(emu_half_value(a), emu_half_value(b), emu_half_value(c))};
}
// Sums and products of two halves are exact in double, so one conversion rounds them once.
__device__ __forceinline__ __half __hadd(__half a, __half b) { return __double2half(emu_half_value(a) + emu_half_value(b)); }
__device__ __forceinline__ __half __hsub(__half a, __half b) { return __double2half(emu_half_value(a) - emu_half_value(b)); }
__device__ __forceinline__ __half __hmul(__half a, __half b) { return __double2half(emu_half_value(a) * emu_half_value(b)); }
__device__ __forceinline__ __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
    return __half2{__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)};
}
__device__ __forceinline__ __half2 __hadd2(__half2 a, __half2 b) { return __half2{__hadd(a.x, b.x), __hadd(a.y, b.y)}; }
__device__ __forceinline__ __half2 __hsub2(__half2 a, __half2 b) { return __half2{__hsub(a.x, b.x), __hsub(a.y, b.y)}; }
__device__ __forceinline__ __half2 __hmul2(__half2 a, __half2 b) { return __half2{__hmul(a.x, b.x), __hmul(a.y, b.y)}; }
