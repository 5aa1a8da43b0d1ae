// CUDA's built-in index types and variables, shared by the kernel shim (which reads them) and the scheduler
// (which sets them for the fiber it runs). One set per worker thread.
#pragma once

struct uint3 {
    unsigned int x, y, z;
};
struct dim3 {
    unsigned int x, y, z;
};

// Hidden, so the compiler uses the local-dynamic TLS model: one TLS lookup per function for all four.
extern __thread uint3 emu_threadIdx __attribute__((visibility("hidden")));
extern __thread uint3 emu_blockIdx __attribute__((visibility("hidden")));
extern __thread dim3 emu_blockDim __attribute__((visibility("hidden")));
extern __thread dim3 emu_gridDim __attribute__((visibility("hidden")));
