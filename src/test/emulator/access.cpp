// The memory-access checks. Kernel code is compiled with -fsanitize=kernel-address and call-based
// instrumentation, so every load and store in it first calls one of the __asan_* hooks below (and build.sh
// renames the kernels' memcpy/memmove/memset calls to the emu_kernel_* versions). A hook that finds an illegal
// access ends the fiber before the access happens.
//
// Rules: an address in the device range must lie, with its whole size, inside one live allocation; an address
// in this thread's dynamic shared memory array must lie below the launch's sharedMemBytes; addresses below
// 64 KiB (null pointers plus an offset) are illegal; everything else (fiber stacks, static __shared__ arrays,
// globals) is allowed.
//
// Alignment: GCC calls the fixed-size hook of N = 2, 4, 8 bytes only for an access whose type is N-aligned, and
// the 16-byte hook for one whose type is at least 8-aligned (less aligned accesses go to __asan_loadN/storeN).
// A GPU faults on a load or store whose address is not a multiple of its size, so the fixed-size hooks require
// that alignment (CUDA_ERROR_MISALIGNED_ADDRESS): a float4, uint4, double2 ... access is one 16-byte access
// checked for 16-byte alignment. The one case this is stricter than a GPU: a 16-byte struct whose type is only
// 8-aligned (two doubles) is held to 16 as well; nvcc would load it as two 8-byte halves.
#include <stdio.h>
#include <string.h>

#include "worker.h"

namespace emu {
namespace {

constexpr uintptr_t kNullRegion = 64 << 10;

// The hooks below run on the fiber, whose frames fault() drops: messages go through stack buffers only.
int access_text(char* out, size_t size, uintptr_t a, size_t n, bool write) {
    return snprintf(out, size, "illegal %zu-byte %s at 0x%lx (", n, write ? "write" : "read", (unsigned long) a);
}

__attribute__((noinline)) void device_slow(Worker* w, uintptr_t a, size_t n, bool write) {
    const Allocation* al = find_allocation(a);
    if (live_range(al, a, n)) {
        w->cache[(a >> 12) % kCacheSlots] = Range{al->base, al->base + al->size};
        return;
    }
    char what[256];
    int at = access_text(what, sizeof what, a, n, write);
    describe(a, n, what + at, sizeof what - at - 1);
    strcat(what, ")");
    fault(w, CUDA_ERROR_ILLEGAL_ADDRESS, what);
}

__attribute__((noinline)) void other_fault(Worker* w, uintptr_t a, size_t n, bool write) {
    char what[256];
    int at = access_text(what, sizeof what, a, n, write);
    if (a < kNullRegion) {
        snprintf(what + at, sizeof what - at, "null pointer region)");
    } else {
        snprintf(what + at, sizeof what - at, "dynamic shared memory offset %zu, the launch has %zu bytes)",
                 (size_t) (a - w->shmBase), w->shmBytes);
    }
    fault(w, CUDA_ERROR_ILLEGAL_ADDRESS, what);
}

inline void check(uintptr_t a, size_t n, bool write) {
    if (n == 0) return;
    Worker* w = fiber_worker();
    if (w == nullptr) return;   // not kernel code on a fiber
    if (in_device_range(a)) {
        const Range& r = w->cache[(a >> 12) % kCacheSlots];
        if (a < r.base || a + n > r.end) device_slow(w, a, n, write);
        return;
    }
    if (a < kNullRegion) other_fault(w, a, n, write);
    if (a - w->shmBase < w->shmCap && a + n - w->shmBase > w->shmBytes) other_fault(w, a, n, write);
}

__attribute__((noinline)) void misaligned_fault(Worker* w, uintptr_t a, size_t n, bool write) {
    char what[160];
    snprintf(what, sizeof what, "misaligned %zu-byte %s at 0x%lx (a %zu-byte access needs a multiple of %zu)", n,
             write ? "write" : "read", (unsigned long) a, n, n);
    fault(w, CUDA_ERROR_MISALIGNED_ADDRESS, what);
}

// An access the compiler made as one naturally aligned N-byte load or store (see the top of this file).
inline void check_aligned(uintptr_t a, size_t n, bool write) {
    if ((a & (n - 1)) != 0) {
        Worker* w = fiber_worker();
        if (w != nullptr) misaligned_fault(w, a, n, write);
    }
    check(a, n, write);
}

}  // namespace

void check_access(uintptr_t a, size_t n, bool write) { check_aligned(a, n, write); }

}  // namespace emu

#define EMU_HOOKS(N)                                                                                  \
    extern "C" void __asan_load##N##_noabort(uintptr_t a) { emu::check_aligned(a, N, false); }      \
    extern "C" void __asan_store##N##_noabort(uintptr_t a) { emu::check_aligned(a, N, true); }
extern "C" void __asan_load1_noabort(uintptr_t a) { emu::check(a, 1, false); }
extern "C" void __asan_store1_noabort(uintptr_t a) { emu::check(a, 1, true); }
EMU_HOOKS(2)
EMU_HOOKS(4)
EMU_HOOKS(8)
EMU_HOOKS(16)

extern "C" void __asan_loadN_noabort(uintptr_t a, size_t n) { emu::check(a, n, false); }
extern "C" void __asan_storeN_noabort(uintptr_t a, size_t n) { emu::check(a, n, true); }

// Library calls the instrumentation does not see: kernel objects call these instead (objcopy --redefine-sym).
extern "C" void* emu_kernel_memcpy(void* d, const void* s, size_t n) {
    emu::check((uintptr_t) s, n, false);
    emu::check((uintptr_t) d, n, true);
    return memcpy(d, s, n);
}

extern "C" void* emu_kernel_memmove(void* d, const void* s, size_t n) {
    emu::check((uintptr_t) s, n, false);
    emu::check((uintptr_t) d, n, true);
    return memmove(d, s, n);
}

extern "C" void* emu_kernel_memset(void* d, int c, size_t n) {
    emu::check((uintptr_t) d, n, true);
    return memset(d, c, n);
}

// Emitted around the dynamic initialisers of instrumented units (the kernel registrations), and before calls
// that do not return; nothing to check.
extern "C" void __asan_before_dynamic_init(const void*) {}
extern "C" void __asan_after_dynamic_init(void) {}
extern "C" void __asan_handle_no_return(void) {}
