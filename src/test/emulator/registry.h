// The kernels compiled into the emulator, registered by the generated code of each .cu file at load time.
#pragma once
#include <string>
#include <vector>

namespace emu {

struct KernelInfo {
    std::string name;
    std::string source;                      // the .cu file it came from
    void* fn;                                // the kernel itself
    void (*invoke)(void* fn, const unsigned char* args);   // unpacks an argument buffer and calls fn
    std::vector<unsigned short> sizes;       // parameter sizes in declaration order
    std::vector<unsigned short> offsets;     // their offsets in the argument buffer
    unsigned argBytes;                       // end of the last parameter
};

const KernelInfo* find_kernel(const std::string& name);

}  // namespace emu
