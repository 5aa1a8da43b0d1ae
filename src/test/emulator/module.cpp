// cuModule* and cuFunc*: a module "loads" by checking its image against the kernels compiled into the emulator
// (same names, same parameter sizes) and against the emulated driver's PTX ISA and the device's architecture.
#include <stdio.h>

#include <vector>

#include "image.h"
#include "registry.h"
#include "state.h"

namespace {

std::string isa_text(int isa) { return std::to_string(isa / 10) + "." + std::to_string(isa % 10); }

// The entry the driver would run: the newest cubin of the device's major version not newer than the device,
// else the newest PTX not newer than the device (JIT).
const emu::ImageEntry* select_entry(const emu::Image& img, std::string* what) {
    const emu::Config& c = emu::config();
    unsigned dev = (unsigned) (c.ccMajor * 10 + c.ccMinor);
    const emu::ImageEntry* best = nullptr;
    for (const emu::ImageEntry& e : img.entries) {
        if (!e.ptx && e.arch / 10 == (unsigned) c.ccMajor && e.arch <= dev && (!best || e.arch > best->arch)) best = &e;
    }
    if (best != nullptr) {
        *what = "sm_" + std::to_string(best->arch) + " cubin";
        return best;
    }
    for (const emu::ImageEntry& e : img.entries) {
        if (e.ptx && e.arch <= dev && (!best || e.arch > best->arch)) best = &e;
    }
    if (best != nullptr) *what = "compute_" + std::to_string(best->arch) + " PTX (JIT)";
    return best;
}

// CU_FUNC_ATTRIBUTE_PTX_VERSION: the .target of the image's PTX (the newest one not newer than the device),
// or the cubin's own architecture when the image has no PTX.
int ptx_target(const emu::Image& img, const emu::ImageEntry& selected) {
    if (selected.ptx) return (int) selected.arch;
    const emu::Config& c = emu::config();
    unsigned dev = (unsigned) (c.ccMajor * 10 + c.ccMinor), best = 0;
    for (const emu::ImageEntry& e : img.entries) {
        if (e.ptx && e.arch <= dev && e.arch > best) best = e.arch;
    }
    return best != 0 ? (int) best : (int) selected.arch;
}

CUresult check_kernels(const char* api, const emu::ImageEntry& e) {
    for (const emu::ImageKernel& k : e.kernels) {
        const emu::KernelInfo* info = emu::find_kernel(k.name);
        if (info == nullptr) {
            emu::report("%s: kernel %s is not compiled into the emulator (rebuild it with src/test/emulator/build.sh "
                        "over the .cu that defines it)", api, k.name.c_str());
            return CUDA_ERROR_INVALID_IMAGE;
        }
        if (!k.paramsKnown) continue;
        if (k.paramSizes.size() != info->sizes.size()) {
            emu::report("%s: kernel %s has %zu parameters in the image but %zu in the emulator's build (%s)", api,
                        k.name.c_str(), k.paramSizes.size(), info->sizes.size(), info->source.c_str());
            return CUDA_ERROR_INVALID_IMAGE;
        }
        for (size_t i = 0; i < k.paramSizes.size(); i++) {
            if (k.paramSizes[i] != info->sizes[i]) {
                emu::report("%s: kernel %s parameter %zu is %u bytes in the image but %u bytes in the emulator's "
                            "build (%s)", api, k.name.c_str(), i, k.paramSizes[i], (unsigned) info->sizes[i],
                            info->source.c_str());
                return CUDA_ERROR_INVALID_IMAGE;
            }
        }
    }
    return CUDA_SUCCESS;
}

CUresult load(const char* api, CUmodule* module, const void* image) {
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
    emu::Image img;
    std::string why;
    if (CUresult r = emu::parse_image(image, &img, &why)) {
        emu::report("%s: %s", api, why.c_str());
        return r;
    }
    const emu::Config& c = emu::config();
    std::string selected;
    const emu::ImageEntry* e = select_entry(img, &selected);
    if (e == nullptr) {
        emu::report("%s: the %s has no cubin or PTX for compute capability %d.%d", api, img.kind.c_str(), c.ccMajor,
                    c.ccMinor);
        return CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    // SASS for the device's architecture runs on a driver older than the toolkit that built it; only PTX has to be
    // JIT-compiled, and a driver cannot compile a PTX ISA newer than its own.
    int maxIsa = emu::max_ptx_isa(c.driverVersion);
    if (e->ptx && e->isa > maxIsa) {
        emu::report("%s: the image's PTX needs PTX ISA %s, but the emulated driver %d supports up to %s", api,
                    isa_text(e->isa).c_str(), c.driverVersion, isa_text(maxIsa).c_str());
        return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    }
    if (CUresult r = check_kernels(api, *e)) return r;

    auto* m = new CUmod_st;
    m->ctx = ctx;
    m->selected = selected;
    m->binaryVersion = c.ccMajor * 10 + c.ccMinor;
    m->ptxVersion = ptx_target(img, *e);
    for (const emu::ImageKernel& k : e->kernels) {
        auto* f = new CUfunc_st;
        f->module = m;
        f->kernel = emu::find_kernel(k.name);
        f->name = k.name;
        emu::add_handle(f);
        m->functions[k.name] = f;
    }
    emu::add_handle(m);
    ctx->modules.push_back(m);
    if (c.verbose) {
        emu::report("%s: %s with %zu entries, running the %s, %zu kernels", api, img.kind.c_str(), img.entries.size(),
                    selected.c_str(), e->kernels.size());
    }
    *module = m;
    return CUDA_SUCCESS;
}

CUresult check_module(CUmodule m) { return emu::is_handle(m) && m->alive ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }

}  // namespace

namespace emu {

CUresult check_function(CUfunction f) {
    return is_handle(f) && f->alive && f->module->alive ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace emu

EMU_API CUresult cuModuleLoadData(CUmodule* module, const void* image) {
    EMU_LOCK;
    return emu::guarded([&] { return load("cuModuleLoadData", module, image); });
}

EMU_API CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int numOptions, void* options,
                                    void** optionValues) {
    EMU_LOCK;
    (void) numOptions, (void) options, (void) optionValues;   // JIT options: nothing is compiled
    return emu::guarded([&] { return load("cuModuleLoadDataEx", module, image); });
}

EMU_API CUresult cuModuleLoadFatBinary(CUmodule* module, const void* fatCubin) {
    EMU_LOCK;
    return emu::guarded([&] { return load("cuModuleLoadFatBinary", module, fatCubin); });
}

EMU_API CUresult cuModuleLoad(CUmodule* module, const char* fname) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (fname == nullptr) return CUDA_ERROR_INVALID_VALUE;
    return emu::guarded([&]() -> CUresult {
        FILE* f = fopen(fname, "rb");
        if (f == nullptr) return CUDA_ERROR_FILE_NOT_FOUND;
        std::vector<char> bytes;
        char buf[65536];
        for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) bytes.insert(bytes.end(), buf, buf + n);
        fclose(f);
        bytes.resize(bytes.size() + 16, 0);   // NUL-terminates PTX text; slack for header reads of tiny files
        return load("cuModuleLoad", module, bytes.data());
    });
}

EMU_API CUresult cuModuleUnload(CUmodule m) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (CUresult r = check_module(m)) return r;
    m->alive = false;
    for (auto& f : m->functions) f.second->alive = false;
    auto& v = m->ctx->modules;
    for (size_t i = 0; i < v.size(); i++) {
        if (v[i] == m) {
            v.erase(v.begin() + (long) i);
            break;
        }
    }
    return CUDA_SUCCESS;
}

EMU_API CUresult cuModuleGetFunction(CUfunction* hfunc, CUmodule m, const char* name) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (hfunc == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = check_module(m)) return r;
    auto it = m->functions.find(name);
    if (it == m->functions.end()) return CUDA_ERROR_NOT_FOUND;
    *hfunc = it->second;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuFuncGetModule(CUmodule* hmod, CUfunction f) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (hmod == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = emu::check_function(f)) return r;
    *hmod = f->module;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuFuncGetAttribute(int* pi, int attrib, CUfunction f) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (pi == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (CUresult r = emu::check_function(f)) return r;
    switch (attrib) {
        case EMU_FUNC_MAX_THREADS_PER_BLOCK: *pi = emu_limits::kMaxThreadsPerBlock; return CUDA_SUCCESS;
        case EMU_FUNC_SHARED_SIZE_BYTES: *pi = 0; return CUDA_SUCCESS;
        case EMU_FUNC_CONST_SIZE_BYTES: *pi = 0; return CUDA_SUCCESS;
        case EMU_FUNC_LOCAL_SIZE_BYTES: *pi = 0; return CUDA_SUCCESS;
        case EMU_FUNC_NUM_REGS: *pi = 32; return CUDA_SUCCESS;   // fake
        case EMU_FUNC_PTX_VERSION: *pi = f->module->ptxVersion; return CUDA_SUCCESS;
        case EMU_FUNC_BINARY_VERSION: *pi = f->module->binaryVersion; return CUDA_SUCCESS;
        case EMU_FUNC_CACHE_MODE_CA: *pi = 0; return CUDA_SUCCESS;
        case EMU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = f->maxDynamicShared; return CUDA_SUCCESS;
        case EMU_FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = f->carveout; return CUDA_SUCCESS;
        case 10: case 11: case 12: case 13: case 14: case 15: *pi = 0; return CUDA_SUCCESS;   // cluster attributes
        default: return CUDA_ERROR_INVALID_VALUE;
    }
}

EMU_API CUresult cuFuncSetAttribute(CUfunction f, int attrib, int value) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (CUresult r = emu::check_function(f)) return r;
    switch (attrib) {
        case EMU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES:
            if (value < 0 || value > emu_limits::kSharedPerBlockOptin) return CUDA_ERROR_INVALID_VALUE;
            f->maxDynamicShared = value;
            return CUDA_SUCCESS;
        case EMU_FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT:
            if (value < -1 || value > 100) return CUDA_ERROR_INVALID_VALUE;
            f->carveout = value;
            return CUDA_SUCCESS;
        default:
            return CUDA_ERROR_INVALID_VALUE;
    }
}

EMU_API CUresult cuFuncSetCacheConfig(CUfunction f, int config) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (CUresult r = emu::check_function(f)) return r;
    return config >= 0 && config <= 3 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EMU_API CUresult cuFuncSetSharedMemConfig(CUfunction f, int config) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (CUresult r = emu::check_function(f)) return r;
    return config >= 0 && config <= 2 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
