// Used by the stubs build.sh generates for every JCuda-imported driver entry point the emulator does not
// implement: each prints once that it is not emulated and returns CUDA_ERROR_NOT_SUPPORTED.
#pragma once

extern "C" int emu_not_emulated(const char* name, int* reported);

#define EMU_STUB(NAME)                                                     \
    extern "C" __attribute__((visibility("default"))) int NAME() {         \
        static int reported;                                               \
        return emu_not_emulated(#NAME, &reported);                         \
    }
