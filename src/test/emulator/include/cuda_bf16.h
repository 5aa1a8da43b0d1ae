// Stand-in for CUDA's cuda_bf16.h when a .cu file is compiled for the CPU emulator: __nv_bfloat16 is 16-bit
// storage with conversions only. Conversions round to nearest even, straight from the source value.
#pragma once
#include "emu_float16.h"

struct __nv_bfloat16 {
    unsigned short __x;
};

__device__ __forceinline__ __nv_bfloat16 __double2bfloat16(double x) {
    return __nv_bfloat16{(unsigned short) emu_fp::round_from_double<8, 7>(x)};
}
__device__ __forceinline__ __nv_bfloat16 __float2bfloat16(float x) { return __double2bfloat16((double) x); }
__device__ __forceinline__ __nv_bfloat16 __float2bfloat16_rn(float x) { return __double2bfloat16((double) x); }
__device__ __forceinline__ float __bfloat162float(__nv_bfloat16 h) { return (float) emu_fp::to_double<8, 7>(h.__x); }
__device__ __forceinline__ unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
__device__ __forceinline__ __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __nv_bfloat16{u}; }
