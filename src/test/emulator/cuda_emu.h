// Force-included (g++ -include) into every .cu file compiled for the CPU CUDA emulator. It maps the CUDA
// device dialect the project's kernels use onto plain C++; see README.md for what is and is not modelled.
#pragma once
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>    // device printf is host printf (unordered between threads)
#include <string.h>   // device memcpy / memset

#include <cmath>

// Kernels' own headers tell the emulator from nvcc by this (src/main/cuda/warp_ops.cuh).
#define MECHSPEC_CUDA_EMULATOR 1

// build.sh first preprocesses each .cu with EMU_SCAN defined and finds the kernels and dynamic shared arrays
// by these markers; the real compile maps them to C++.
#ifdef EMU_SCAN
#define __global__ EMU_GLOBAL_MARKER
#define __shared__ EMU_SHARED_MARKER
#else
#define __global__
// One block runs entirely on one worker thread, so a thread_local is exactly per-block shared memory.
#define __shared__ thread_local
#endif

#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))   // as nvcc: always inlined, whatever GCC's estimate
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __constant__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n))) // accepted where CUDA puts it: between decl-specifiers

#include "emu_builtins.h"
#include "emu_vector_types.h"
#include "emu_warp.h"
#include "emu_atomics.h"

// Kernels see the running fiber's built-ins read-only.
#define threadIdx (static_cast<const uint3&>(emu_threadIdx))
#define blockIdx (static_cast<const uint3&>(emu_blockIdx))
#define blockDim (static_cast<const dim3&>(emu_blockDim))
#define gridDim (static_cast<const dim3&>(emu_gridDim))
static constexpr int warpSize = 32;

// A real barrier: the calling fiber yields until every thread of the block has arrived at the same call site.
// A macro, so that the call (and its return address, which identifies the site) sits in the kernel's code.
extern "C" void emu_syncthreads(void);
#define __syncthreads() emu_syncthreads()

// Cache-hinted loads and stores: plain accesses here (the hint only steers a GPU's caches), checked as any other.
template <typename T>
inline T __ldg(const T* p) { return *p; }
template <typename T>
inline T __ldcg(const T* p) { return *p; }
template <typename T>
inline T __ldca(const T* p) { return *p; }
template <typename T>
inline T __ldcs(const T* p) { return *p; }
template <typename T>
inline T __ldlu(const T* p) { return *p; }
template <typename T>
inline T __ldcv(const T* p) { return *p; }
template <typename T>
inline void __stcg(T* p, T v) { *p = v; }
template <typename T>
inline void __stcs(T* p, T v) { *p = v; }
template <typename T>
inline void __stwb(T* p, T v) { *p = v; }
template <typename T>
inline void __stwt(T* p, T v) { *p = v; }

// Blocks of one launch share no memory the emulator orders; a fence only has to stop compiler reordering.
inline void __threadfence_block() { __asm__ __volatile__("" ::: "memory"); }
inline void __threadfence() { __asm__ __volatile__("" ::: "memory"); }

// Explicitly rounded operations. Kernels are compiled with multiply-add contraction on, as nvcc compiles them;
// these are the operations nvcc never fuses. An empty asm that claims to change a value hides it from the
// optimiser, so the add in __dadd_rn never sees the multiply that produced its operand, and the product of
// __dmul_rn never reaches the add that consumes it: each rounds once, on its own.
template <typename T>
inline T emu_unfusable(T v) {
    __asm__("" : "+x"(v));
    return v;
}
inline double __dadd_rn(double a, double b) { return emu_unfusable(emu_unfusable(a) + emu_unfusable(b)); }
inline double __dsub_rn(double a, double b) { return emu_unfusable(emu_unfusable(a) - emu_unfusable(b)); }
inline double __dmul_rn(double a, double b) { return emu_unfusable(emu_unfusable(a) * emu_unfusable(b)); }
inline double __ddiv_rn(double a, double b) { return emu_unfusable(emu_unfusable(a) / emu_unfusable(b)); }
inline float __fadd_rn(float a, float b) { return emu_unfusable(emu_unfusable(a) + emu_unfusable(b)); }
inline float __fsub_rn(float a, float b) { return emu_unfusable(emu_unfusable(a) - emu_unfusable(b)); }
inline float __fmul_rn(float a, float b) { return emu_unfusable(emu_unfusable(a) * emu_unfusable(b)); }
inline float __fdiv_rn(float a, float b) { return emu_unfusable(emu_unfusable(a) / emu_unfusable(b)); }
// One rounding of a * b + c (build.sh compiles kernels with -mfma, so these are single instructions).
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
// A float's bits as an integer and back (CUDA's reinterpretations: no conversion).
inline unsigned __float_as_uint(float x) { unsigned u; __builtin_memcpy(&u, &x, sizeof u); return u; }
inline float __uint_as_float(unsigned u) { float x; __builtin_memcpy(&x, &u, sizeof x); return x; }
inline int __float_as_int(float x) { return (int) __float_as_uint(x); }
inline float __int_as_float(int i) { return __uint_as_float((unsigned) i); }

// The fast single-precision intrinsics: the host's expf/logf, or values within their documented error
// (MECHSPEC_EMU_MATH=adversarial, math.cpp). The kernels' calls of exp, expf, log, ... reach math.cpp as well:
// build.sh renames them in the kernel objects.
extern "C" float emu_math_fast_expf(float x);
extern "C" float emu_math_fast_logf(float x);
extern "C" float emu_math_ex2_ftz(float x);   // warp_ops.cuh's ex2_ftz
inline float __expf(float x) { return emu_math_fast_expf(x); }
inline float __logf(float x) { return emu_math_fast_logf(x); }

// Tensor-core multiply-accumulate and byte permute (after emu_unfusable and the warp shuffles they use).
#include "emu_mma.h"
