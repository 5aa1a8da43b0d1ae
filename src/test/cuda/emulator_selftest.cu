// Small deliberately broken kernels for the CPU CUDA emulator's self-tests (src/test/emulator). Each shows
// that one class of bug is caught: the emulator must flag them the way a GPU (or compute-sanitizer) would.
// They compile with nvcc as well, so the same fatbin serves the emulator and a real device.
#include <assert.h>
#include <cuda_fp16.h>
#include <cuda_pipeline.h>

#include "../../main/cuda/warp_ops.cuh"

// Correct: y[i] = x[i] for i < n.
extern "C" __global__ void selftest_copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}

// Writes y[n] as well: one element past the end of y.
extern "C" __global__ void selftest_out_of_bounds(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
    if (i == 0) y[n] = 0.0f;
}

// Only the first half of each block reaches the barrier; the other half exits.
extern "C" __global__ void selftest_divergent_barrier(float* y, int n) {
    if (threadIdx.x < blockDim.x / 2) __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (float) i;
}

// Needs blockDim.x * 4 bytes of dynamic shared memory: y[i] = the global index of thread (t + 1) % blockDim.x
// of the same block. Launched with fewer bytes, a thread writes beyond the launch's shared memory.
extern "C" __global__ void selftest_shared(float* y, int n) {
    extern __shared__ float selftest_smem[];
    int t = threadIdx.x;
    selftest_smem[t] = (float) (blockIdx.x * blockDim.x + t);
    __syncthreads();
    int i = blockIdx.x * blockDim.x + t;
    if (i < n) y[i] = selftest_smem[(t + 1) % blockDim.x];
}

// A race: every thread writes its global index into y[0], no barrier. The last writer wins, so the result
// depends on thread order (with one block: blockDim.x - 1 in the emulator's forward order, 0 in reverse).
extern "C" __global__ void selftest_reverse_sensitive(float* y) {
    y[0] = (float) (blockIdx.x * blockDim.x + threadIdx.x);
}

// A failed device-side assert: CUDA_ERROR_ASSERT for the launch, sticky like any execution error.
extern "C" __global__ void selftest_assert(const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) assert(x[i] >= 0.0f);
}

// Reads its dynamic shared memory before anyone wrote it, then leaves its block index there: each output is what
// the block found, which a GPU leaves undefined. The emulator gives every block the poison pattern (all bits set),
// never the previous block's leftovers.
extern "C" __global__ void selftest_shared_leftover(float* y) {
    extern __shared__ float selftest_smem[];
    int t = threadIdx.x;
    y[blockIdx.x * blockDim.x + t] = selftest_smem[t];
    selftest_smem[t] = (float) blockIdx.x;
}

// A race neither thread order exposes: the middle thread of each block writes 2, the others 1, and the last
// writer wins. Run forward or backward the last writer is an end thread (1); a shuffled order may end with the
// middle one.
extern "C" __global__ void selftest_order_sensitive(float* y) {
    y[blockIdx.x] = threadIdx.x == blockDim.x / 2 ? 2.0f : 1.0f;
}

// Meaningful on the emulator only, where a block's threads run one at a time between barriers: records the
// position each thread ran at in two barrier phases (order[t] and order[blockDim.x + t]), through an unguarded
// shared counter that on a GPU would be a race.
extern "C" __global__ void selftest_order_trace(int* order) {
    extern __shared__ int selftest_counter[];
    int t = threadIdx.x;
    if (t == 0) selftest_counter[0] = 0;
    __syncthreads();
    order[t] = selftest_counter[0]++;
    __syncthreads();
    order[blockDim.x + t] = selftest_counter[0]++;
}

// Multiply-add as nvcc compiles it: out[0] = a * b + c may be contracted into one fused multiply-add (nvcc's
// default), out[1] = __dadd_rn(__dmul_rn(a, b), c) never is, out[2] = __fma_rn(a, b, c) always is; the same in
// float for out32 from abc32. With a = 1 + e, b = 1 - e, c = -1 the product 1 - e² rounds to 1, so the unfused
// result is 0 and the fused one -e².
extern "C" __global__ void selftest_multiply_add(const double* abc, double* out, const float* abc32, float* out32) {
    double a = abc[0], b = abc[1], c = abc[2];
    out[0] = a * b + c;
    out[1] = __dadd_rn(__dmul_rn(a, b), c);
    out[2] = __fma_rn(a, b, c);
    float a32 = abc32[0], b32 = abc32[1], c32 = abc32[2];
    out32[0] = a32 * b32 + c32;
    out32[1] = __fadd_rn(__fmul_rn(a32, b32), c32);
    out32[2] = __fmaf_rn(a32, b32, c32);
}

// The device math functions on x[i] (x > 0): out[8 i + k] = exp, exp2, expm1, log, log2, log1p, tanh, pow(x, 1.37)
// in double; out32[10 i + k] = the same in float, then __expf and __logf.
extern "C" __global__ void selftest_math(const double* x, double* out, float* out32, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    double* o = out + 8 * i;
    o[0] = exp(v);
    o[1] = exp2(v);
    o[2] = expm1(v);
    o[3] = log(v);
    o[4] = log2(v);
    o[5] = log1p(v);
    o[6] = tanh(v);
    o[7] = pow(v, 1.37);
    float f = (float) v;
    float* p = out32 + 10 * i;
    p[0] = expf(f);
    p[1] = exp2f(f);
    p[2] = expm1f(f);
    p[3] = logf(f);
    p[4] = log2f(f);
    p[5] = log1pf(f);
    p[6] = tanhf(f);
    p[7] = powf(f, 1.37f);
    p[8] = __expf(f);
    p[9] = __logf(f);
}

// ---- vector types, warp intrinsics, atomics, asynchronous copies (the emulator models and checks them) ----

// Correct: y[i] = x[i] for i < n4 * 4, one 16-byte float4 load and store per thread.
extern "C" __global__ void selftest_vector_copy(const float* x, float* y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) reinterpret_cast<float4*>(y)[i] = reinterpret_cast<const float4*>(x)[i];
}

// Reads float4s starting one float into x: every load is 4-byte aligned, not 16 (MISALIGNED_ADDRESS on a GPU).
extern "C" __global__ void selftest_misaligned_float4(const float* x, float* y, int n4) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4 - 1) {
        float4 v = reinterpret_cast<const float4*>(x + 1)[i];   // used piecewise: GCC loads it as four floats
        y[i] = v.x + v.y + v.z + v.w;
    }
}

// Correct: y[b] = the sum of x[b * blockDim.x ...] (0 past n), each warp reducing with shuffles (xor butterfly,
// then down), warps combined through shared memory (blockDim.x / 32 floats) behind a __syncthreads, then by
// warp 0. Integer-valued inputs make the sum exact, so every thread order must give the same bits.
extern "C" __global__ void selftest_warp_reduce(const float* x, float* y, int n) {
    extern __shared__ float selftest_warp_sums[];
    const unsigned full = 0xffffffffu;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float v = i < n ? x[i] : 0.0f;
    for (int offset = 16; offset >= 4; offset /= 2) v += __shfl_xor_sync(full, v, offset);
    for (int offset = 2; offset >= 1; offset /= 2) v += __shfl_down_sync(full, v, offset);
    if (lane == 0) selftest_warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        int warps = blockDim.x / 32;
        float s = lane < warps ? selftest_warp_sums[lane] : 0.0f;
        for (int offset = 16; offset >= 1; offset /= 2) s += __shfl_down_sync(full, s, offset);
        if (lane == 0) y[blockIdx.x] = s;
    }
}

// Correct, launched with a (16, 4, 1) block: out[k * 64 + t] is what linear thread t (x + 16 y) gets from the
// k-th intrinsic below (see WarpIntrinsicsTest for the expected values).
extern "C" __global__ void selftest_warp_ops(int* out) {
    const unsigned full = 0xffffffffu;
    int t = threadIdx.x + threadIdx.y * blockDim.x;
    int lane = t % 32;
    out[0 * 64 + t] = __shfl_sync(full, t, 3);
    out[1 * 64 + t] = __shfl_up_sync(full, t, 2, 8);
    out[2 * 64 + t] = __shfl_down_sync(full, t, 3, 16);
    out[3 * 64 + t] = __shfl_xor_sync(full, t, 5);
    out[4 * 64 + t] = (int) __ballot_sync(full, t % 3 == 0);
    out[5 * 64 + t] = __all_sync(full, t < 1000) + 2 * __any_sync(full, t == 40);
    out[6 * 64 + t] = (int) (2.0 * __shfl_xor_sync(full, t * 0.5, 1));
    out[7 * 64 + t] = (int) (__shfl_down_sync(full, (long long) t << 33, 1) >> 33);
    out[8 * 64 + t] = (int) __activemask();
    if (lane < 16) {   // two halves of each warp shuffle separately, each naming its own lanes
        out[9 * 64 + t] = __shfl_xor_sync(0x0000ffffu, t, 8);
    } else {
        out[9 * 64 + t] = __shfl_xor_sync(0xffff0000u, t, 8);
    }
    __syncwarp();
    out[10 * 64 + t] = (int) __shfl_sync(full, (unsigned) t * 3u, 31 - lane);
}

// Lane 5 of every warp exits; the others shuffle with a mask that still names it (a launch error).
extern "C" __global__ void selftest_warp_exited_lane(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x % 32 == 5) return;
    float v = __shfl_xor_sync(0xffffffffu, (float) i, 1);
    if (i < n) y[i] = v;
}

// Correct: x[0..n) are small non-negative ints. out[0..7]: how many are v with v % 8 == bin (counted in shared
// memory, 8 ints, then added to global); out[8]: max; out[9]: min (as unsigned); out[10]: how many threads won
// the atomicCAS of out[11] from -1 (must be 1); out[11]: the winner's index; out[12]: an index some thread left
// by atomicExch. *total, *dsum, *fsum: the sum of x as unsigned long long, double and float.
extern "C" __global__ void selftest_atomics(const int* x, int n, int* out, unsigned long long* total, double* dsum,
                                            float* fsum) {
    extern __shared__ int selftest_bins[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x < 8) selftest_bins[threadIdx.x] = 0;
    __syncthreads();
    if (i < n) {
        int v = x[i];
        atomicAdd(&selftest_bins[v % 8], 1);
        atomicMax(&out[8], v);
        atomicMin(reinterpret_cast<unsigned*>(&out[9]), (unsigned) v);
        if (atomicCAS(&out[11], -1, i) == -1) atomicAdd(&out[10], 1);
        atomicExch(&out[12], i);
        atomicAdd(total, (unsigned long long) v);
        atomicAdd(dsum, (double) v);
        atomicAdd(fsum, (float) v);
    }
    __syncthreads();
    if (threadIdx.x < 8) atomicAdd(&out[threadIdx.x], selftest_bins[threadIdx.x]);
}

// Correct: stages x through shared memory with asynchronous copies (blockDim.x * 20 bytes of dynamic shared
// memory). Batch 1: thread i copies x[4i .. 4i+3] as one 16-byte piece, odd i zero-filling its last 8 bytes;
// batch 2: x[i] as a 4-byte piece. After waiting for batch 1, y[4i ..] = the staged piece; after batch 2, z[i] =
// the staged x[i]. For i < n4 (x holds 4 * n4 floats).
extern "C" __global__ void selftest_pipeline_copy(const float* x, float* y, float* z, int n4) {
    extern __shared__ float4 selftest_stage[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    float* single = reinterpret_cast<float*>(selftest_stage + blockDim.x);
    if (i < n4) __pipeline_memcpy_async(&selftest_stage[t], reinterpret_cast<const float4*>(x) + i, 16, i % 2 == 1 ? 8 : 0);
    __pipeline_commit();
    if (i < n4) __pipeline_memcpy_async(&single[t], &x[i], 4);
    __pipeline_commit();
    __pipeline_wait_prior(1);
    if (i < n4) reinterpret_cast<float4*>(y)[i] = selftest_stage[t];
    __pipeline_wait_prior(0);
    if (i < n4) z[i] = single[t];
}

// Thread 0 of block 0 copies the 16 bytes just past the end of x (4 * n4 floats).
extern "C" __global__ void selftest_pipeline_out_of_bounds(const float* x, int n4) {
    extern __shared__ float4 selftest_stage[];
    if (blockIdx.x == 0 && threadIdx.x == 0) __pipeline_memcpy_async(&selftest_stage[0], x + 4 * n4, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
}

// Lanes 0-15 shuffle naming lanes 0-16, lanes 16-31 at the same call naming lanes 16-31: two masks that overlap
// (a launch error, found when lane 16 arrives while lanes 0-15 wait for it).
extern "C" __global__ void selftest_warp_overlapping_masks(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned mask = threadIdx.x % 32 < 16 ? 0x0001ffffu : 0xffff0000u;
    float v = __shfl_sync(mask, (float) i, threadIdx.x % 32 < 16 ? 0 : 16);
    if (i < n) y[i] = v;
}

// Every lane shuffles with a mask that leaves out lane 0 (a launch error when lane 0 calls).
extern "C" __global__ void selftest_warp_caller_unnamed(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = __shfl_xor_sync(0xfffffffeu, (float) i, 2);
    if (i < n) y[i] = v;
}

// Lane 7 of every warp waits at __syncthreads while the other lanes wait at a __syncwarp that names it.
extern "C" __global__ void selftest_warp_stall(float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x % 32 == 7) {
        __syncthreads();
    } else {
        __syncwarp();
    }
    if (i < n) y[i] = (float) i;
}

// Correct, one warp: D = A·B + C by mma_m16n8k16_f32_f16 (warp_ops.cuh). A [16][16] and B [16][8] are fp16 bits,
// row-major both; each lane loads its fragments in PTX's layout and writes its four results to D [16][8].
extern "C" __global__ void selftest_mma(const unsigned short* A, const unsigned short* B, const float* C, float* D) {
    int lane = threadIdx.x;
    int g = lane / 4, t = lane % 4;
    unsigned a[4], b[2];
    float c[4], d[4];
    for (int r = 0; r < 4; r++) {
        int row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
        a[r] = A[row * 16 + col] | (unsigned) A[row * 16 + col + 1] << 16;
    }
    for (int r = 0; r < 2; r++) {
        int k = 2 * t + 8 * r;
        b[r] = B[k * 8 + g] | (unsigned) B[(k + 1) * 8 + g] << 16;
    }
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    mma_m16n8k16_f32_f16(d, a, b, c);
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

// Correct, one warp, 64 words of dynamic shared memory (every word first 0xDEADBEEF): copy_async_if<4> (warp_ops.cuh)
// of src[i] into shared word i where its predicate holds (lane l: word l where l is even, word 32 + l where l < 5),
// then every word into out (WarpMatrixOpsTest has the values).
extern "C" __global__ void selftest_copy_async(const unsigned* src, unsigned* out) {
    extern __shared__ unsigned selftest_words[];
    int lane = threadIdx.x;
    selftest_words[lane] = 0xDEADBEEFu;
    selftest_words[32 + lane] = 0xDEADBEEFu;
    __syncwarp();
    copy_async_if<4>((lane & 1) == 0, selftest_words + lane, src + lane);
    copy_async_if<4>(lane < 5, selftest_words + 32 + lane, src + 32 + lane);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncwarp();
    out[lane] = selftest_words[lane];
    out[32 + lane] = selftest_words[32 + lane];
}

// Correct, one thread: ex2_ftz (ex2.approx.ftz.f32) of each of x[0 .. n), into out (WarpMatrixOpsTest has the values).
extern "C" __global__ void selftest_ex2(const float* x, float* out, int n) {
    for (int i = 0; i < n; i++) out[i] = ex2_ftz(x[i]);
}

// Correct, one thread: the bit-level and half2 operations on the words in x, into out (BitOpsTest has the
// expected values): lop3 with five truth tables, __byte_perm with four selectors, and the fp16 "magic number"
// dequantization (code | 0x6400 is the half 1024 + code; one __hfma2 with the scale and zero − 1024·scale), and
// __funnelshift_r by 0, 12 and 44 (which wraps to 12).
extern "C" __global__ void selftest_bits(const unsigned* x, unsigned* out) {
    unsigned a = x[0], b = x[1], c = x[2];
    out[0] = lop3<0xF0>(a, b, c);
    out[1] = lop3<0xCC>(a, b, c);
    out[2] = lop3<0xAA>(a, b, c);
    out[3] = lop3<0x96>(a, b, c);   // a ^ b ^ c
    out[4] = lop3<0xE8>(a, b, c);   // majority
    out[5] = __byte_perm(a, b, 0x3210);
    out[6] = __byte_perm(a, b, 0x7654);
    out[7] = __byte_perm(a, b, 0x0123);
    out[8] = __byte_perm(a, b, 0x5140);
    // Two 2-bit codes of x[3] (bits 0-1 and 16-17), each in the low bits of its 16-bit lane, as halves 1024 + code.
    unsigned codes = lop3<0xEA>(x[3], 0x00030003u, 0x64006400u);   // (x & 0x00030003) | 0x64006400
    __half2 h;
    memcpy(&h, &codes, sizeof h);   // the word as two halves, without breaking type-based aliasing
    __half2 scale = __floats2half2_rn(0.25f, 0.25f);
    __half2 zero = __floats2half2_rn(-1.0f - 1024.0f * 0.25f, -1.0f - 1024.0f * 0.25f);
    __half2 v = __hfma2(h, scale, zero);
    memcpy(&out[9], &v, sizeof v);
    __half2 s = __hadd2(__floats2half2_rn(1.0f, 2048.0f), __floats2half2_rn(0.000976562f, 1.0f));
    memcpy(&out[10], &s, sizeof s);
    __half2 m = __hmul2(__floats2half2_rn(3.0f, -0.5f), __floats2half2_rn(0.333251953f, 65504.0f));
    memcpy(&out[11], &m, sizeof m);
    out[12] = __funnelshift_r(a, b, 0);
    out[13] = __funnelshift_r(a, b, 12);
    out[14] = __funnelshift_r(a, b, 44);
    // A 3-bit code under garbage (5) and a 9-bit one (0x183 = 387) as the exact subnormal halves 5·2^-24 and 387·2^-24.
    out[15] = codes_to_half2(0xFFFFFF05u, 0x12340183u, 0x01FF0007u);
}
