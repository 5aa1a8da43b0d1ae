// Reading module images: PTX text, a fatbin from `nvcc -fatbin -no-compress` (or the wrapper struct that points
// to one), or a single cubin. Only what module loading needs: entries, architectures, versions, kernels.
#pragma once
#include <string>
#include <vector>

#include "api.h"

namespace emu {

struct ImageKernel {
    std::string name;
    std::vector<unsigned> paramSizes;
    bool paramsKnown = true;    // a cubin without .nv.info parameter records says nothing about sizes
};

struct ImageEntry {
    bool ptx = false;           // PTX text, else an ELF cubin
    unsigned arch = 0;          // e.g. 80 for sm_80 / compute_80
    int isa = -1;               // PTX ISA version times 10 (PTX: .version; cubin: implied by its toolkit), -1 unknown
    std::string toolkit;        // cubin: "13.0" from its toolkit note, when present
    std::vector<ImageKernel> kernels;
};

struct Image {
    std::string kind;           // "fatbin", "PTX" or "cubin"
    std::vector<ImageEntry> entries;
};

// On failure returns CUDA_ERROR_INVALID_IMAGE (or CUDA_ERROR_INVALID_PTX) and says why in *why.
CUresult parse_image(const void* image, Image* out, std::string* why);

// The newest PTX ISA (times 10) a driver of this version accepts, e.g. 13000 -> 90, 12040 -> 84.
int max_ptx_isa(int driverVersion);

}  // namespace emu
