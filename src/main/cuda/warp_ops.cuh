// Tensor-core and bit-level building blocks with one meaning on a GPU (the PTX instruction, sm_80 and later) and on
// the project's CPU emulator (src/test/emulator/emu_mma.h, cuda_emu.h): a kernel that uses them runs unchanged on
// both. The emulator's self-test (src/test/cuda/emulator_selftest.cu, EmulatedDriverSelfTest) checks each against
// hand-computed values, on a GPU as on the emulator.
#pragma once
#include <cuda_fp16.h>
#include <cuda_pipeline.h>

#define FULL 0xffffffffu   // every lane of a warp

// D = A·B + C, m16n8k16, A row-major and B column-major fp16, C and D fp32, every lane of a full warp at once, with
// PTX's fragment layout (g = lane / 4, t = lane % 4; each .b32 holds two halves, the lower column or row first):
//   a[0] = A[g][2t, 2t+1], a[1] = A[g+8][2t, 2t+1], a[2] = A[g][2t+8, 2t+9], a[3] = A[g+8][2t+8, 2t+9];
//   b[0] = B[2t, 2t+1][g], b[1] = B[2t+8, 2t+9][g];  c, d: [0], [1] = (g, 2t), (g, 2t+1); [2], [3] = (g+8, ...).
__device__ __forceinline__ void mma_m16n8k16_f32_f16(float d[4], const unsigned a[4], const unsigned b[2], const float c[4]) {
#if defined(__CUDA_ARCH__)
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%10, %11, %12, %13};\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
                   "f"(c[3]));
#elif defined(MECHSPEC_CUDA_EMULATOR)
    emu_mma_m16n8k16_f32_f16_f16_f32(d, a, b, c);
#endif
}

// 2^x on the special function unit alone, PTX ex2.approx.ftz.f32: the approximation exp2f uses (CUDA documents 2
// ulps) without the range fix-up exp2f puts around it for results below 2^-126 (about four instructions a call); a
// subnormal x counts as 0, and a result below 2^-126 is 0.
__device__ __forceinline__ float ex2_ftz(float x) {
#if defined(__CUDA_ARCH__)
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#elif defined(MECHSPEC_CUDA_EMULATOR)
    return emu_math_ex2_ftz(x);
#endif
}

// Scores are kept in log2 units (q·k · scale · log2 e: log2e_scale below), so every exponential of the online
// softmax and of the merges is one exp2; the output is the same softmax. In fp32 it is ex2_ftz (above), the
// special function unit's MUFU.EX2 alone: every argument here is a difference s - m <= 0, a weight at most 1, and
// one below 2^-126 (0 here, subnormal from exp2f, whose range fix-up costs about four instructions a call) sits
// beside a weight of 1 in the same sum.
template <typename T> __device__ __forceinline__ T exp2_t(T x);
template <> __device__ __forceinline__ float exp2_t<float>(float x) { return ex2_ftz(x); }
template <> __device__ __forceinline__ double exp2_t<double>(double x) { return exp2(x); }

// Any bitwise function of three words in one instruction: bit i of the result is bit (a_i·4 + b_i·2 + c_i) of LUT
// (0xF0 = a, 0xCC = b, 0xAA = c; so a & b | c is 0xF0 & 0xCC | 0xAA = 0xEA).
template <unsigned LUT>
__device__ __forceinline__ unsigned lop3(unsigned a, unsigned b, unsigned c) {
#if defined(__CUDA_ARCH__)
    unsigned d;
    asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(LUT & 0xFFu));
    return d;
#else
    unsigned d = 0;
    for (int m = 0; m < 8; m++) {
        if (LUT >> m & 1u) d |= (m & 4 ? a : ~a) & (m & 2 ? b : ~b) & (m & 1 ? c : ~c);
    }
    return d;
#endif
}

// BYTES (4, 8 or 16; dst and src aligned to it) from global src to shared dst by cp.async (its commit and wait:
// __pipeline_commit, __pipeline_wait_prior) where p holds, else nothing: one predicated LDGSTS on a GPU, not a branch
// around it (nor the three never-executed LDS ptxas puts before a __pipeline_memcpy_async's); on the emulator that
// copy where p holds.
template <int BYTES>
__device__ __forceinline__ void copy_async_if(bool p, void* dst, const void* src) {
    static_assert(BYTES == 4 || BYTES == 8 || BYTES == 16, "cp.async copies 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__)
    asm volatile("\t{\n\t.reg .pred q;\n\tsetp.ne.b32 q, %2, 0;\n\t@q cp.async.ca.shared.global [%0], [%1], %3;\n\t}\n"
                 :: "r"((unsigned int) __cvta_generic_to_shared(dst)), "l"(src), "r"((int) p), "n"(BYTES) : "memory");
#else
    if (p) __pipeline_memcpy_async(dst, src, BYTES);
#endif
}

// An fp16 pair's bits, as the one 32-bit register it is.
__device__ __forceinline__ unsigned int half2_bits(__half2 h) {
    unsigned int u;
    memcpy(&u, &h, sizeof u);
    return u;
}

// Codes go into A as fp16 subnormals: a half whose exponent field is 0 and whose mantissa field holds m (< 2^10) is
// exactly m·2^-24 (IEEE binary16), so a code is its own half once the bits around it are masked off, and the sums an
// mma makes of them are 2^-24 of the codes' (CODE_UNSCALE undoes it, a power of two: exact). The tensor cores take
// fp16 subnormal operands as they are, not flushed (the self-test's selftest_mma checks it, on a GPU as on the
// emulator). Why not the magic number (code | 0x6400 is 1024 + code, then 1024 subtracted): one HSUB2 more an A
// register, for the same exact value.
#define CODE_UNSCALE 16777216.0f   // 2^24

// Two codes side by side (each below 2^10: the low bits of v's halves under mask's) as the fp16 pair of their values
// times 2^-24: one LOP3.
__device__ __forceinline__ unsigned paired_codes_to_half2(unsigned v, unsigned mask) { return v & mask; }

// The same for two codes in the low bits of lo and of hi: lo's low half and hi's side by side first (PRMT).
__device__ __forceinline__ unsigned codes_to_half2(unsigned lo, unsigned hi, unsigned mask) {
    return paired_codes_to_half2(__byte_perm(lo, hi, 0x5410), mask);
}

// The larger of two (FMNMX, one instruction; no NaN reaches the kernels: their inputs are checked on the host).
__device__ __forceinline__ float larger(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double larger(double a, double b) { return fmax(a, b); }

struct LargerOp {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return larger(a, b); }
};
struct SumOp {
    template <typename T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

// x combined by op with the lane's partners at xor offsets from, from/2, ..., 1 (every lane of a full warp).
template <typename T, typename Op>
__device__ __forceinline__ T warp_butterfly(T x, int from, Op op) {
#pragma unroll
    for (int o = from; o > 0; o >>= 1) x = op(x, __shfl_xor_sync(FULL, x, o));
    return x;
}

// The largest x of the warp, in every lane (xor butterfly over the 32 lanes).
template <typename T>
__device__ __forceinline__ T warp_max(T x) { return warp_butterfly(x, 16, LargerOp{}); }

// The sum of x over the warp, in every lane (xor butterfly over the 32 lanes: each lane adds the same pairs in the
// same order, so all get the same bits).
template <typename T>
__device__ __forceinline__ T warp_sum(T x) { return warp_butterfly(x, 16, SumOp{}); }

// N values a lane (N a power of two, at most 32), each reduced by op over the warp, every result in every lane:
// reduce-scatter, then broadcast. Each xor step of the first log2(N) halves the values a lane carries (the lanes
// with that bit set keep the upper half and send the lower, the others the reverse), the rest of the butterfly runs
// on the one left, which lane L then holds for value L / (32 / N); one shuffle from lane i·32/N brings value i to
// every lane. 2N - 1 + log2(32/N) shuffles in all, not N·5 as N warp_max or warp_sum calls take (N = 4: 10, not 20),
// and every lane gets the same bits (one lane's order of operations, broadcast; N = 1 is warp_max's or warp_sum's
// butterfly).
template <int N, typename T, typename Op>
__device__ __forceinline__ void warp_reduce_each(T (&x)[N], int lane, Op op) {
    static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "N a power of two up to 32");
    T y[N];
#pragma unroll
    for (int i = 0; i < N; i++) y[i] = x[i];
    int o = 16;
#pragma unroll
    for (int n = N; n > 1; n >>= 1, o >>= 1) {
        bool upper = lane & o;
#pragma unroll
        for (int i = 0; i < n / 2; i++) {
            T send = upper ? y[i] : y[i + n / 2], keep = upper ? y[i + n / 2] : y[i];
            y[i] = op(keep, __shfl_xor_sync(FULL, send, o));
        }
    }
    y[0] = warp_butterfly(y[0], o, op);
    if constexpr (N == 1) {
        x[0] = y[0];   // the butterfly left it in every lane
    } else {
#pragma unroll
        for (int i = 0; i < N; i++) x[i] = __shfl_sync(FULL, y[0], i * (32 / N));
    }
}

template <int N, typename T>
__device__ __forceinline__ void warp_max_each(T (&x)[N], int lane) { warp_reduce_each<N>(x, lane, LargerOp{}); }

template <int N, typename T>
__device__ __forceinline__ void warp_sum_each(T (&x)[N], int lane) { warp_reduce_each<N>(x, lane, SumOp{}); }
