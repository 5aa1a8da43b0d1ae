// CUDA's atomic functions for kernels: real atomic read-modify-writes on the host memory, since a launch's blocks
// run concurrently on the worker threads. Relaxed, as CUDA's atomics are (they order nothing else). GCC's
// address-sanitizer instrumentation sees each __atomic builtin as one access of its size, so an atomic goes
// through access.cpp's hooks like every other access: bounds and natural alignment checked. Included by
// cuda_emu.h.
#pragma once

#define EMU_ATOMIC_ORDER __ATOMIC_RELAXED

// A compare-and-swap loop for the operations with no atomic builtin (float and double add, max, min): applies
// `update` to the value in *address until no other thread changed it in between; returns the old value.
template <typename Bits, typename T, typename Update>
inline T emu_atomic_update(T* address, Update update) {
    static_assert(sizeof(Bits) == sizeof(T), "the bits must be the value's size");
    typedef Bits __attribute__((may_alias)) AliasedBits;
    AliasedBits* word = reinterpret_cast<AliasedBits*>(address);
    Bits expected = __atomic_load_n(word, EMU_ATOMIC_ORDER);
    for (;;) {
        T old;
        __builtin_memcpy(&old, &expected, sizeof old);
        T next = update(old);
        Bits desired;
        __builtin_memcpy(&desired, &next, sizeof desired);
        if (__atomic_compare_exchange_n(word, &expected, desired, false, EMU_ATOMIC_ORDER, EMU_ATOMIC_ORDER)) return old;
    }
}

inline int atomicAdd(int* a, int v) { return __atomic_fetch_add(a, v, EMU_ATOMIC_ORDER); }
inline unsigned atomicAdd(unsigned* a, unsigned v) { return __atomic_fetch_add(a, v, EMU_ATOMIC_ORDER); }
inline unsigned long long atomicAdd(unsigned long long* a, unsigned long long v) {
    return __atomic_fetch_add(a, v, EMU_ATOMIC_ORDER);
}
inline float atomicAdd(float* a, float v) {
    return emu_atomic_update<unsigned>(a, [v](float old) { return old + v; });
}
inline double atomicAdd(double* a, double v) {
    return emu_atomic_update<unsigned long long>(a, [v](double old) { return old + v; });
}
inline int atomicSub(int* a, int v) { return __atomic_fetch_sub(a, v, EMU_ATOMIC_ORDER); }
inline unsigned atomicSub(unsigned* a, unsigned v) { return __atomic_fetch_sub(a, v, EMU_ATOMIC_ORDER); }

inline int atomicMax(int* a, int v) {
    return emu_atomic_update<int>(a, [v](int old) { return old > v ? old : v; });
}
inline unsigned atomicMax(unsigned* a, unsigned v) {
    return emu_atomic_update<unsigned>(a, [v](unsigned old) { return old > v ? old : v; });
}
inline int atomicMin(int* a, int v) {
    return emu_atomic_update<int>(a, [v](int old) { return old < v ? old : v; });
}
inline unsigned atomicMin(unsigned* a, unsigned v) {
    return emu_atomic_update<unsigned>(a, [v](unsigned old) { return old < v ? old : v; });
}

// Returns the old value whether or not it equalled `compare`, as CUDA's atomicCAS does.
template <typename T>
inline T emu_atomic_cas(T* a, T compare, T value) {
    __atomic_compare_exchange_n(a, &compare, value, false, EMU_ATOMIC_ORDER, EMU_ATOMIC_ORDER);
    return compare;
}
inline int atomicCAS(int* a, int compare, int value) { return emu_atomic_cas(a, compare, value); }
inline unsigned atomicCAS(unsigned* a, unsigned compare, unsigned value) { return emu_atomic_cas(a, compare, value); }
inline unsigned long long atomicCAS(unsigned long long* a, unsigned long long compare, unsigned long long value) {
    return emu_atomic_cas(a, compare, value);
}

inline int atomicExch(int* a, int v) { return __atomic_exchange_n(a, v, EMU_ATOMIC_ORDER); }
inline unsigned atomicExch(unsigned* a, unsigned v) { return __atomic_exchange_n(a, v, EMU_ATOMIC_ORDER); }
inline float atomicExch(float* a, float v) {
    return emu_atomic_update<unsigned>(a, [v](float) { return v; });
}
