// Included by the translation unit build.sh generates for each .cu file: registers each __global__ kernel
// with the runtime. The parameter sizes and the argument-buffer layout come from the kernel's own signature.
#pragma once
#include <stddef.h>
#include <string.h>
#include <array>
#include <utility>

extern "C" void emu_register_kernel(const char* name, const char* source, void* fn,
                                    void (*invoke)(void* fn, const unsigned char* args), int paramCount,
                                    const unsigned short* sizes, const unsigned short* offsets, unsigned argBytes);

namespace emu_reg {

// The CUDA argument buffer: each parameter at the next offset aligned to its own alignment, no tail padding.
template <size_t N>
constexpr std::array<unsigned short, N + 1> layout(const std::array<unsigned short, N + 1>& sizes,
                                                   const std::array<unsigned short, N + 1>& aligns) {
    std::array<unsigned short, N + 1> offsets{};
    unsigned at = 0;
    for (size_t i = 0; i < N; i++) {
        at = (at + aligns[i] - 1) / aligns[i] * aligns[i];
        offsets[i] = (unsigned short) at;
        at += sizes[i];
    }
    offsets[N] = (unsigned short) at;   // total size
    return offsets;
}

// The argument buffer is the runtime's own memory: reading it needs no access checks. (GCC never inlines
// the instrumented kernel into these uninstrumented functions, so the kernel keeps its checks.)
#define EMU_UNCHECKED __attribute__((no_sanitize("kernel-address")))

template <typename T>
EMU_UNCHECKED inline T load(const unsigned char* p) {
    T v;
    memcpy(&v, p, sizeof v);
    return v;
}

template <typename... A>
struct Signature {
    static constexpr size_t N = sizeof...(A);
    static constexpr std::array<unsigned short, N + 1> sizes{{(unsigned short) sizeof(A)..., 0}};
    static constexpr std::array<unsigned short, N + 1> aligns{{(unsigned short) alignof(A)..., 1}};
    static constexpr std::array<unsigned short, N + 1> offsets = layout<N>(sizes, aligns);

    template <size_t... I>
    EMU_UNCHECKED static void call(void (*fn)(A...), const unsigned char* args, std::index_sequence<I...>) {
        fn(load<A>(args + offsets[I])...);
    }
    // Unpacks one launch's argument buffer and calls the kernel (on the current fiber).
    EMU_UNCHECKED static void invoke(void* fn, const unsigned char* args) {
        call(reinterpret_cast<void (*)(A...)>(fn), args, std::index_sequence_for<A...>{});
    }
};

template <typename... A>
int register_kernel(const char* name, const char* source, void (*fn)(A...)) {
    using S = Signature<A...>;
    emu_register_kernel(name, source, reinterpret_cast<void*>(fn), &S::invoke, (int) S::N, S::sizes.data(),
                        S::offsets.data(), S::offsets[S::N]);
    return 0;
}

}  // namespace emu_reg

#define EMU_REGISTER_KERNEL(NAME, SOURCE) \
    static const int emu_registered_##NAME = emu_reg::register_kernel(#NAME, SOURCE, &NAME);
