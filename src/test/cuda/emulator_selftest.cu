// Small deliberately broken kernels for the CPU CUDA emulator's self-tests (src/test/emulator). Each shows
// that one class of bug is caught: the emulator must flag them the way a GPU (or compute-sanitizer) would.
// They compile with nvcc as well, so the same fatbin serves the emulator and a real device.

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
