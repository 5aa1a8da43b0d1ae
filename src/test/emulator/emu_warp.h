// Warp intrinsics for kernels (warp.cpp runs them). Included by cuda_emu.h.
//
// Every intrinsic is an always-inlined wrapper around one call of emu_warp_call, so that call's return address
// lies in the kernel's own code and identifies the call site, as __syncthreads' does. Values travel as their bits:
// any trivially copyable type of at most 8 bytes can be shuffled (CUDA declares int, unsigned, long, long long,
// their unsigned forms, float, double, __half and __half2).
#pragma once
#include <stdint.h>

#include <type_traits>

extern "C" uint64_t emu_warp_call(int op, unsigned mask, uint64_t value, int arg, int width);
extern "C" unsigned emu_warp_active_mask(void);

#define EMU_WARP_INLINE __attribute__((always_inline)) inline

// The operation numbers of warp.cpp's WarpOp.
enum : int {
    emu_warp_shfl_idx,
    emu_warp_shfl_up,
    emu_warp_shfl_down,
    emu_warp_shfl_xor,
    emu_warp_ballot,
    emu_warp_all,
    emu_warp_any,
    emu_warp_syncwarp,
    emu_warp_gather
};

template <typename T>
EMU_WARP_INLINE T emu_warp_shuffle(int op, unsigned mask, T var, int arg, int width) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "a shuffled value is at most 8 bytes");
    uint64_t bits = 0;
    __builtin_memcpy(&bits, &var, sizeof var);
    bits = emu_warp_call(op, mask, bits, arg, width);
    T result;
    __builtin_memcpy(&result, &bits, sizeof result);
    return result;
}

template <typename T>
EMU_WARP_INLINE T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32) {
    return emu_warp_shuffle(emu_warp_shfl_idx, mask, var, srcLane, width);
}
template <typename T>
EMU_WARP_INLINE T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32) {
    return emu_warp_shuffle(emu_warp_shfl_up, mask, var, (int) delta, width);
}
template <typename T>
EMU_WARP_INLINE T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32) {
    return emu_warp_shuffle(emu_warp_shfl_down, mask, var, (int) delta, width);
}
template <typename T>
EMU_WARP_INLINE T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32) {
    return emu_warp_shuffle(emu_warp_shfl_xor, mask, var, laneMask, width);
}

EMU_WARP_INLINE unsigned __ballot_sync(unsigned mask, int predicate) {
    return (unsigned) emu_warp_call(emu_warp_ballot, mask, predicate != 0, 0, 32);
}
EMU_WARP_INLINE int __all_sync(unsigned mask, int predicate) {
    return (int) emu_warp_call(emu_warp_all, mask, predicate != 0, 0, 32);
}
EMU_WARP_INLINE int __any_sync(unsigned mask, int predicate) {
    return (int) emu_warp_call(emu_warp_any, mask, predicate != 0, 0, 32);
}
EMU_WARP_INLINE void __syncwarp(unsigned mask = 0xffffffffu) { emu_warp_call(emu_warp_syncwarp, mask, 0, 0, 32); }

// The emulator's own collective, for warp-wide instructions whose lanes read one another's registers (mma): every
// lane of mask gives `bytes` bytes at `mine` and gets lane i's at all + i·bytes (a lane outside mask: poison bits),
// at one meeting of the lanes, where shuffles would take one meeting per word and lane.
struct EmuGather {
    const void* mine;
    void* all;
    int bytes;
};
EMU_WARP_INLINE void emu_warp_gather_bytes(unsigned mask, const void* mine, void* all, int bytes) {
    EmuGather g{mine, all, bytes};
    emu_warp_call(emu_warp_gather, mask, (uint64_t) (uintptr_t) &g, bytes, 32);
}
EMU_WARP_INLINE unsigned __activemask() { return emu_warp_active_mask(); }

// The bit intrinsics that go with ballots.
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned) x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long) x); }
inline unsigned __brev(unsigned x) {
    unsigned r = 0;
    for (int i = 0; i < 32; i++) r |= (x >> i & 1u) << (31 - i);
    return r;
}
