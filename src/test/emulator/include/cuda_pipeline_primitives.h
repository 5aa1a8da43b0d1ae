// Stand-in for CUDA's cuda_pipeline_primitives.h when a .cu file is compiled for the CPU emulator: the
// asynchronous-copy primitives, run by the emulator's pipeline.cpp (checked when issued, copied when waited for).
#pragma once
#include <stddef.h>

extern "C" void emu_pipeline_memcpy_async(void* dst, const void* src, size_t bytes, size_t zeros);
extern "C" void emu_pipeline_commit(void);
extern "C" void emu_pipeline_wait_prior(size_t prior);

// Copies size_and_align bytes (4, 8 or 16, both addresses aligned to it) from global to shared memory, the last
// zfill of them as zeros.
inline void __pipeline_memcpy_async(void* __restrict dst_shared, const void* __restrict src_global,
                                    size_t size_and_align, size_t zfill = 0) {
    emu_pipeline_memcpy_async(dst_shared, src_global, size_and_align, zfill);
}
inline void __pipeline_commit() { emu_pipeline_commit(); }
inline void __pipeline_wait_prior(size_t prior) { emu_pipeline_wait_prior(prior); }
