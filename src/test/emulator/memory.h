// Device memory: one big reserved virtual range. Every allocation is followed by an inaccessible gap, so an
// out-of-bounds access is recognisable; freed address ranges are reused as a GPU's allocator reuses them, so a
// stale pointer may alias a newer allocation; fresh allocations hold a poison pattern, not zeros.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "api.h"

namespace emu {

struct Allocation {
    uintptr_t base;
    size_t size;          // bytes requested
    size_t span;          // bytes of address space it owns: its pages and the gap after them
    CUctx_st* ctx;
    bool live;            // a freed allocation's record stays (for messages) until its range is reused
};

// What a fresh allocation holds: all bytes 0xFF, a NaN in fp16, bf16, fp32 and fp64 and -1 in every integer
// width, so a kernel reading memory nobody wrote shows it.
constexpr unsigned char kPoisonByte = 0xFF;

// The reserved device range [g_deviceBase, g_deviceBase + g_deviceSpan); empty until the first allocation.
extern uintptr_t g_deviceBase;
extern size_t g_deviceSpan;

inline bool in_device_range(uintptr_t a) { return a - g_deviceBase < g_deviceSpan; }

CUresult device_alloc(CUctx_st* ctx, size_t bytes, CUdeviceptr* out);
CUresult device_free(CUdeviceptr p);            // CUDA_ERROR_INVALID_VALUE unless p is a live allocation's base
void free_context_allocations(CUctx_st* ctx);
size_t live_bytes();

// The allocation (live, or freed and not yet reused) whose span holds a, or null.
const Allocation* find_allocation(uintptr_t a);
// The live allocation whose span holds a, or null: find_allocation without the freed records (the access hooks'
// lookup; freed records only matter for messages).
const Allocation* live_allocation(uintptr_t a);

// Counts the frees (and context resets) so far. The access hooks cache live allocations; a free is the only
// change that can make a cached range stale. Changes under the API lock only, never while kernels run.
uint64_t allocation_generation();

// True when [a, a + n) lies inside one live allocation.
inline bool live_range(const Allocation* al, uintptr_t a, size_t n) {
    return al != nullptr && al->live && a >= al->base && n <= al->size && a - al->base <= al->size - n;
}

// For messages, into out: what [a, a + n) hits ("allocation 0x..+N, offset K: M bytes beyond its end",
// "freed allocation ...", "outside any allocation: offset K from allocation ...", "no allocation").
void describe(uintptr_t a, size_t n, char* out, size_t size);

// Checks one side of a copy or memset: a device pointer must cover [p, p + n) with one live allocation; a host
// pointer must not point into the device range. Reports and returns CUDA_ERROR_INVALID_VALUE otherwise.
CUresult check_device_range(const char* api, CUdeviceptr p, size_t n);
CUresult check_host_range(const char* api, const void* p, size_t n);

}  // namespace emu
