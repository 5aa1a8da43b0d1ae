// The device address range and its allocation table: freed ranges reused most recent first, a bump pointer above.
#include "memory.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <iterator>
#include <map>
#include <vector>

#include "state.h"

namespace emu {

uintptr_t g_deviceBase = 0;
size_t g_deviceSpan = 0;

namespace {

constexpr size_t kGap = 64 << 10;   // inaccessible bytes after each allocation's last page

uintptr_t g_next = 0;              // bump pointer: nothing at or above it has been handed out yet
size_t g_liveBytes = 0;
// Records by base, live and freed apart (the access hooks look up live ones only); their spans never overlap (a
// reused range drops the freed records in it).
std::map<uintptr_t, Allocation*>* g_live = nullptr;
std::map<uintptr_t, Allocation*>* g_freed = nullptr;
uint64_t g_generation = 0;   // frees so far (allocation_generation)
// Freed address ranges (an allocation's pages and gap), the most recently freed last. Not coalesced: a GPU's
// allocator hands a freed block to the next allocation that fits, so a stale pointer aliases it.
struct FreeRange {
    uintptr_t base;
    size_t bytes;
};
std::vector<FreeRange>* g_free = nullptr;

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
            g_next = g_deviceBase + kGap;   // the first 64 KiB stay unmapped too
            g_deviceSpan = span;
            g_live = new std::map<uintptr_t, Allocation*>;
            g_freed = new std::map<uintptr_t, Allocation*>;
            g_free = new std::vector<FreeRange>;
            return true;
        }
    }
    report("cannot reserve address space for device memory: %s", strerror(errno));
    return false;
}

// Returns a range to "reserved, no access, no memory" (its old contents are gone).
void decommit(uintptr_t base, size_t bytes) {
    mmap((void*) base, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

// The front of the most recently freed range that holds span bytes (its rest stays free), else fresh addresses
// from the bump pointer; 0 when the device range is used up.
uintptr_t take_range(size_t span) {
    for (size_t i = g_free->size(); i-- > 0;) {
        FreeRange& r = (*g_free)[i];
        if (r.bytes < span) continue;
        uintptr_t base = r.base;
        r.base += span;
        r.bytes -= span;
        if (r.bytes == 0) g_free->erase(g_free->begin() + (long) i);
        return base;
    }
    if (span > g_deviceBase + g_deviceSpan - g_next) return 0;
    uintptr_t base = g_next;
    g_next += span;
    return base;
}

void give_back_range(uintptr_t base, size_t span) { g_free->push_back(FreeRange{base, span}); }

// Drops the records of freed allocations whose spans overlap [base, base + span), which is being reused.
void forget_freed(uintptr_t base, size_t span) {
    auto it = g_freed->lower_bound(base);
    if (it != g_freed->begin() && std::prev(it)->second->base + std::prev(it)->second->span > base) --it;
    while (it != g_freed->end() && it->first < base + span) {
        delete it->second;
        it = g_freed->erase(it);
    }
}

void release(Allocation* a) {
    decommit(a->base, round_up(a->size, page()));
    a->live = false;
    g_live->erase(a->base);
    (*g_freed)[a->base] = a;
    g_liveBytes -= a->size;
    g_generation++;
    give_back_range(a->base, a->span);
}

// The record in `records` whose span holds a, or null.
const Allocation* find_in(const std::map<uintptr_t, Allocation*>& records, uintptr_t a) {
    auto it = records.upper_bound(a);
    if (it == records.begin()) return nullptr;
    const Allocation* al = std::prev(it)->second;
    return a - al->base < al->span ? al : nullptr;
}

}  // namespace

CUresult device_alloc(CUctx_st* ctx, size_t bytes, CUdeviceptr* out) {
    if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    if (!reserve()) return CUDA_ERROR_OUT_OF_MEMORY;
    if (bytes > emu_limits::kTotalMemory - g_liveBytes) return CUDA_ERROR_OUT_OF_MEMORY;
    size_t mapped = round_up(bytes, page());
    size_t span = mapped + kGap;
    uintptr_t base = take_range(span);
    if (base == 0) {
        report("the device address range is used up");
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (mprotect((void*) base, mapped, PROT_READ | PROT_WRITE) != 0) {
        give_back_range(base, span);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    forget_freed(base, span);
    auto* a = new Allocation{base, bytes, span, ctx, true};
    (*g_live)[base] = a;
    g_liveBytes += bytes;
    memset((void*) base, kPoisonByte, bytes);   // a GPU's fresh memory holds whatever was there, never a promise
    *out = base;
    return CUDA_SUCCESS;
}

CUresult device_free(CUdeviceptr p) {
    if (g_live == nullptr) return CUDA_ERROR_INVALID_VALUE;
    auto it = g_live->find((uintptr_t) p);
    if (it == g_live->end()) return CUDA_ERROR_INVALID_VALUE;
    release(it->second);
    return CUDA_SUCCESS;
}

void free_context_allocations(CUctx_st* ctx) {
    if (g_live == nullptr) return;
    for (auto it = g_live->begin(); it != g_live->end();) {   // by base, as ever: the free list's order
        Allocation* a = (it++)->second;                        // release() erases a's entry
        if (a->ctx == ctx) release(a);
    }
}

size_t live_bytes() { return g_liveBytes; }

uint64_t allocation_generation() { return g_generation; }

const Allocation* live_allocation(uintptr_t a) {
    if (g_live == nullptr || !in_device_range(a)) return nullptr;
    return find_in(*g_live, a);
}

const Allocation* find_allocation(uintptr_t a) {
    if (g_live == nullptr || !in_device_range(a)) return nullptr;
    const Allocation* al = find_in(*g_live, a);
    return al != nullptr ? al : find_in(*g_freed, a);
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
    if (live_range(live_allocation((uintptr_t) p), (uintptr_t) p, n)) return CUDA_SUCCESS;
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
