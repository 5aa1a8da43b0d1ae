// cuLaunchKernel: configuration and argument checks (returned at once, not sticky), then the launch itself;
// an execution error becomes the process's sticky error, as it would on a GPU.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <vector>

#include "scheduler.h"
#include "state.h"

namespace {

CUresult bad_config(const char* kernel, const char* what) {
    emu::report("cuLaunchKernel: %s: %s", kernel, what);
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult check_config(const CUfunc_st* f, const uint3& g, const uint3& b, unsigned shared) {
    using namespace emu_limits;
    const char* k = f->name.c_str();
    char what[160];
    if (g.x == 0 || g.y == 0 || g.z == 0 || b.x == 0 || b.y == 0 || b.z == 0) return bad_config(k, "a grid or block dimension is 0");
    if ((uint64_t) b.x * b.y * b.z > (uint64_t) kMaxThreadsPerBlock || b.x > (unsigned) kMaxBlockDimXY ||
        b.y > (unsigned) kMaxBlockDimXY || b.z > (unsigned) kMaxBlockDimZ) {
        snprintf(what, sizeof what, "block (%u,%u,%u) exceeds the limits (%d threads, %d x %d x %d)", b.x, b.y, b.z,
                 kMaxThreadsPerBlock, kMaxBlockDimXY, kMaxBlockDimXY, kMaxBlockDimZ);
        return bad_config(k, what);
    }
    if (g.x > kMaxGridDimX || g.y > kMaxGridDimYZ || g.z > kMaxGridDimYZ) {
        snprintf(what, sizeof what, "grid (%u,%u,%u) exceeds the limits (%u x %u x %u)", g.x, g.y, g.z, kMaxGridDimX,
                 kMaxGridDimYZ, kMaxGridDimYZ);
        return bad_config(k, what);
    }
    if (shared > (unsigned) f->maxDynamicShared) {
        snprintf(what, sizeof what, "%u bytes of dynamic shared memory requested, the function allows %d", shared,
                 f->maxDynamicShared);
        return bad_config(k, what);
    }
    return CUDA_SUCCESS;
}

// Packs the arguments into the kernel's buffer layout, from kernelParams or from extra.
CUresult pack_arguments(const emu::KernelInfo& k, void** kernelParams, void** extra, std::vector<unsigned char>* out) {
    out->assign(k.argBytes, 0);
    const char* name = k.name.c_str();
    if (kernelParams != nullptr && extra != nullptr) return bad_config(name, "both kernelParams and extra are given");
    if (kernelParams != nullptr) {
        for (size_t i = 0; i < k.sizes.size(); i++) {
            if (kernelParams[i] == nullptr) return bad_config(name, "a kernelParams entry is null");
            memcpy(out->data() + k.offsets[i], kernelParams[i], k.sizes[i]);
        }
        return CUDA_SUCCESS;
    }
    if (extra == nullptr) {
        if (k.sizes.empty()) return CUDA_SUCCESS;
        return bad_config(name, "neither kernelParams nor extra is given");
    }
    const void* buffer = nullptr;
    const size_t* size = nullptr;
    for (size_t i = 0; extra[i] != EMU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == EMU_LAUNCH_PARAM_BUFFER_POINTER) buffer = extra[i + 1];
        else if (extra[i] == EMU_LAUNCH_PARAM_BUFFER_SIZE) size = (const size_t*) extra[i + 1];
        else return bad_config(name, "unknown key in extra");
    }
    if (buffer == nullptr || size == nullptr) return bad_config(name, "extra needs both the buffer pointer and its size");
    if (*size != k.argBytes) {
        emu::report("kernel %s takes %zu parameters (%u bytes), launch passed %zu bytes", name, k.sizes.size(),
                    k.argBytes, *size);
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (k.argBytes != 0) memcpy(out->data(), buffer, k.argBytes);
    return CUDA_SUCCESS;
}

// MECHSPEC_EMU_VERBOSE: totals printed at exit, to see where a slow test spends its emulated time.
struct Totals {
    unsigned long long launches = 0, blocks = 0, threads = 0;
    double seconds = 0;
};
Totals g_totals;

void print_totals() {
    emu::report("%llu launches, %llu blocks, %llu threads, %.3f s running kernels", g_totals.launches,
                g_totals.blocks, g_totals.threads, g_totals.seconds);
}

// At the first launch: one line per strict mode with its seed, so that a failing run can be replayed (and one
// when the kernels lack nvcc's contraction, see build.sh).
void announce_modes() {
    const emu::Config& c = emu::config();
#if !EMU_KERNELS_CONTRACTED
    emu::report("kernels were built without multiply-add contraction (the build host has no FMA instructions): "
                "unlike nvcc's, every a * b + c rounds twice");
#endif
    if (c.order == emu::ThreadOrder::kShuffle) {
        unsigned long long seed = c.shuffleSeed;
        emu::report("thread order shuffled, seed %llu (MECHSPEC_EMU_THREAD_ORDER=shuffle:%llu reproduces it)", seed,
                    seed);
    }
    if (c.adversarialMath) {
        unsigned long long seed = c.mathSeed;
        emu::report("math functions perturbed within CUDA's ulp bounds, seed %llu (MECHSPEC_EMU_MATH=adversarial:%llu "
                    "reproduces it)", seed, seed);
    }
}

uint64_t g_launches = 0;   // launches started in this process

CUresult launch(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
                CUstream hStream, void** kernelParams, void** extra) {
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (CUresult r = emu::check_function(f)) return r;
    if (CUresult r = emu::check_stream(hStream)) return r;
    const uint3 grid{gridDimX, gridDimY, gridDimZ}, block{blockDimX, blockDimY, blockDimZ};
    if (CUresult r = check_config(f, grid, block, sharedMemBytes)) return r;
    std::vector<unsigned char> args;
    if (CUresult r = pack_arguments(*f->kernel, kernelParams, extra, &args)) return r;

    emu::Launch L;
    L.kernel = f->kernel;
    L.grid = grid;
    L.block = block;
    L.sharedBytes = sharedMemBytes;
    L.args = args.data();
    L.totalBlocks = (uint64_t) gridDimX * gridDimY * gridDimZ;
    if (g_launches == 0) announce_modes();
    L.number = g_launches++;
    auto start = std::chrono::steady_clock::now();
    CUresult error = emu::execute(L);
    if (emu::config().verbose) {
        if (g_totals.launches++ == 0) atexit(print_totals);
        g_totals.blocks += L.totalBlocks;
        g_totals.threads += L.totalBlocks * blockDimX * blockDimY * blockDimZ;
        g_totals.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    if (error != CUDA_SUCCESS) emu::set_sticky_error(error);   // every later call of the process returns it
    return CUDA_SUCCESS;
}

}  // namespace

EMU_API CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra) {
    EMU_LOCK;
    return emu::guarded([&] {
        return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                      kernelParams, extra);
    });
}

// No grid-wide synchronisation exists in the emulator, so a cooperative launch is an ordinary one.
EMU_API CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                           unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                           unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                           void** kernelParams) {
    return cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,
                          kernelParams, nullptr);
}
