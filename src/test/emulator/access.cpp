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
// Alignment is checked twice. Kernels are also compiled with -fsanitize=alignment, so every dereference of a typed
// pointer (p[i], p->x, *p) first tests the pointer against its type's alignment and calls
// __ubsan_handle_type_mismatch_v1 below when it fails: a float4 read through a pointer that is not 16-byte aligned
// faults even where GCC then splits the copy into four 4-byte loads, as a GPU faults on its 16-byte load. And the
// fixed-size hooks require natural alignment of what GCC made one access (it calls the hook of N = 2, 4, 8 bytes
// only for an access whose type is N-aligned, the 16-byte one for an at least 8-aligned one; atomics included).
// A misaligned access is CUDA_ERROR_MISALIGNED_ADDRESS.
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
    const Allocation* al = live_allocation(a);
    if (live_range(al, a, n)) {
        w->cache[cache_slot(a)] = Range{al->base, al->base + al->size};
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
        const Range& r = w->cache[cache_slot(a)];
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

// An access the compiler made as one naturally aligned N-byte load or store (see the top of this file); a
// 16-byte one is only known to be 8-aligned (a struct of two doubles), the type check covers the rest.
inline void check_aligned(uintptr_t a, size_t n, bool write) {
    if ((a & ((n < 8 ? n : 8) - 1)) != 0) {
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

// -fsanitize=alignment's report (the layout is GCC's and LLVM's ubsan ABI): a pointer of type T dereferenced at
// an address that is not a multiple of alignof(T).
namespace {
struct UbsanSourceLocation {
    const char* file;
    uint32_t line, column;
};
struct UbsanTypeDescriptor {
    uint16_t kind, info;
    char name[1];
};
struct UbsanTypeMismatch {
    UbsanSourceLocation where;
    const UbsanTypeDescriptor* type;
    unsigned char logAlignment;
    unsigned char checkKind;   // 0 load, 1 store, 2 reference binding, 3 member access, 4 member call, ...
};
}  // namespace

extern "C" void __ubsan_handle_type_mismatch_v1(UbsanTypeMismatch* data, uintptr_t a) {
    emu::Worker* w = emu::fiber_worker();
    if (w == nullptr || data->logAlignment == 0 || (a & ((1ul << data->logAlignment) - 1)) == 0) return;
    static const char* const kinds[] = {"read", "write", "reference", "member access", "member call"};
    const char* file = strrchr(data->where.file, '/');
    char what[256];
    snprintf(what, sizeof what, "misaligned access to %s at 0x%lx (%s; its type needs %lu-byte alignment; %s:%u)",
             data->type->name, (unsigned long) a, data->checkKind < 5 ? kinds[data->checkKind] : "use",
             1ul << data->logAlignment, file != nullptr ? file + 1 : data->where.file, data->where.line);
    emu::fault(w, CUDA_ERROR_MISALIGNED_ADDRESS, what);
}

extern "C" void __ubsan_handle_type_mismatch_v1_abort(UbsanTypeMismatch* data, uintptr_t a) {
    __ubsan_handle_type_mismatch_v1(data, a);
}

// Emitted around the dynamic initialisers of instrumented units (the kernel registrations), and before calls
// that do not return; nothing to check.
extern "C" void __asan_before_dynamic_init(const void*) {}
extern "C" void __asan_after_dynamic_init(void) {}
extern "C" void __asan_handle_no_return(void) {}
