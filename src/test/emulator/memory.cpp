// The device address range and its allocation table.
#include "memory.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "state.h"

namespace emu {

uintptr_t g_deviceBase = 0;
size_t g_deviceSpan = 0;

namespace {

constexpr size_t kGap = 64 << 10;   // inaccessible bytes after each allocation's last page

uintptr_t g_next = 0;                         // bump pointer: addresses are never handed out twice
size_t g_liveBytes = 0;
std::vector<Allocation*>* g_allocs = nullptr;  // sorted by base (bases only grow); records are never deleted

size_t page() {
    static const size_t p = (size_t) sysconf(_SC_PAGESIZE);
    return p;
}

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

bool reserve() {
    if (g_deviceSpan != 0) return true;
    // 256 GiB of address space, no memory: pages are committed per allocation.
    for (size_t gib : {256, 64, 16}) {
        size_t span = gib << 30;
        void* p = mmap(nullptr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            g_deviceBase = (uintptr_t) p;
            g_next = g_deviceBase + kGap;   // the first page stays unmapped too
            g_deviceSpan = span;
            g_allocs = new std::vector<Allocation*>;
            return true;
        }
    }
    report("cannot reserve address space for device memory: %s", strerror(errno));
    return false;
}

// Returns a range to "reserved, no access, no memory".
void decommit(uintptr_t base, size_t bytes) {
    mmap((void*) base, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

void release(Allocation* a) {
    decommit(a->base, round_up(a->size, page()));
    a->live = false;
    g_liveBytes -= a->size;
}

}  // namespace

CUresult device_alloc(CUctx_st* ctx, size_t bytes, CUdeviceptr* out) {
    if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!reserve()) return CUDA_ERROR_OUT_OF_MEMORY;
    if (bytes > emu_limits::kTotalMemory - g_liveBytes) return CUDA_ERROR_OUT_OF_MEMORY;
    size_t mapped = round_up(bytes, page());
    size_t span = mapped + kGap;
    if (span > g_deviceBase + g_deviceSpan - g_next) {
        report("the device address range is used up (addresses are never reused)");
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (mprotect((void*) g_next, mapped, PROT_READ | PROT_WRITE) != 0) return CUDA_ERROR_OUT_OF_MEMORY;
    auto* a = new Allocation{g_next, bytes, span, ctx, true};
    g_allocs->push_back(a);
    g_next += span;
    g_liveBytes += bytes;
    *out = a->base;
    return CUDA_SUCCESS;
}

CUresult device_free(CUdeviceptr p) {
    const Allocation* found = find_allocation((uintptr_t) p);
    if (found == nullptr || found->base != p || !found->live) return CUDA_ERROR_INVALID_VALUE;
    release(const_cast<Allocation*>(found));
    return CUDA_SUCCESS;
}

void free_context_allocations(CUctx_st* ctx) {
    if (g_allocs == nullptr) return;
    for (Allocation* a : *g_allocs) {
        if (a->live && a->ctx == ctx) release(a);
    }
}

size_t live_bytes() { return g_liveBytes; }

const Allocation* find_allocation(uintptr_t a) {
    if (g_allocs == nullptr || !in_device_range(a)) return nullptr;
    auto it = std::upper_bound(g_allocs->begin(), g_allocs->end(), a,
                               [](uintptr_t v, const Allocation* al) { return v < al->base; });
    if (it == g_allocs->begin()) return nullptr;
    const Allocation* al = *(it - 1);
    return a - al->base < al->span ? al : nullptr;
}

void describe(uintptr_t a, size_t n, char* out, size_t size) {
    const Allocation* al = find_allocation(a);
    if (al == nullptr) {
        snprintf(out, size, "no allocation");
        return;
    }
    const size_t offset = a - al->base;
    const unsigned long base = (unsigned long) al->base;
    if (!al->live) {
        snprintf(out, size, "freed allocation 0x%lx+%zu, offset %zu", base, al->size, offset);
    } else if (offset < al->size) {
        snprintf(out, size, "allocation 0x%lx+%zu, offset %zu: %zu bytes beyond its end", base, al->size, offset,
                 offset + n - al->size);
    } else {
        snprintf(out, size, "outside any allocation: offset %zu from allocation 0x%lx+%zu", offset, base, al->size);
    }
}

CUresult check_device_range(const char* api, CUdeviceptr p, size_t n) {
    if (n == 0) return CUDA_SUCCESS;
    if (live_range(find_allocation((uintptr_t) p), (uintptr_t) p, n)) return CUDA_SUCCESS;
    char what[160] = "not device memory";
    if (in_device_range((uintptr_t) p)) describe((uintptr_t) p, n, what, sizeof what);
    report("%s: device range 0x%llx+%zu is not inside one live allocation (%s)", api, p, n, what);
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult check_host_range(const char* api, const void* p, size_t n) {
    if (n == 0) return CUDA_SUCCESS;
    if (p == nullptr) {
        report("%s: null host pointer", api);
        return CUDA_ERROR_INVALID_VALUE;
    }
    // Unified addressing: a "host" pointer may be device memory, but then it must be a live range too.
    if (in_device_range((uintptr_t) p)) return check_device_range(api, (CUdeviceptr) p, n);
    return CUDA_SUCCESS;
}

}  // namespace emu
