// Small deliberately broken kernels for the CPU CUDA emulator's self-tests (src/test/emulator). Each shows
// that one class of bug is caught: the emulator must flag them the way a GPU (or compute-sanitizer) would.
// They compile with nvcc as well, so the same fatbin serves the emulator and a real device.
#include <assert.h>

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
    if (i < n4 - 1) reinterpret_cast<float4*>(y)[i] = reinterpret_cast<const float4*>(x + 1)[i];
}
