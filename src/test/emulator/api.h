// The slice of the CUDA driver ABI the emulator implements, declared here (no CUDA headers are needed to build
// it): handle types, result codes and enum values, all as the real driver defines them.
#pragma once
#include <stddef.h>

#include <new>

// Every exported driver entry point: C linkage, default visibility (everything else in the library is hidden).
#define EMU_API extern "C" __attribute__((visibility("default")))

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef void (*CUhostFn)(void* userData);
typedef void (*CUstreamCallback)(CUstream hStream, CUresult status, void* userData);

struct CUuuid {
    char bytes[16];
};

struct CUdevprop {
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int sharedMemPerBlock;
    int totalConstantMemory;
    int SIMDWidth;
    int memPitch;
    int regsPerBlock;
    int clockRate;
    int textureAlign;
};

enum : CUresult {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_INVALID_CONTEXT = 201,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_UNSUPPORTED_LIMIT = 215,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_FILE_NOT_FOUND = 301,
    CUDA_ERROR_INVALID_HANDLE = 400,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708,
    CUDA_ERROR_ASSERT = 710,
    CUDA_ERROR_MISALIGNED_ADDRESS = 716,
    CUDA_ERROR_LAUNCH_FAILED = 719,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_UNKNOWN = 999,
};

// cuLaunchKernel's `extra` keys.
#define EMU_LAUNCH_PARAM_END ((void*) 0)
#define EMU_LAUNCH_PARAM_BUFFER_POINTER ((void*) 1)
#define EMU_LAUNCH_PARAM_BUFFER_SIZE ((void*) 2)

// Function attributes (CUfunction_attribute).
enum {
    EMU_FUNC_MAX_THREADS_PER_BLOCK = 0,
    EMU_FUNC_SHARED_SIZE_BYTES = 1,
    EMU_FUNC_CONST_SIZE_BYTES = 2,
    EMU_FUNC_LOCAL_SIZE_BYTES = 3,
    EMU_FUNC_NUM_REGS = 4,
    EMU_FUNC_PTX_VERSION = 5,
    EMU_FUNC_BINARY_VERSION = 6,
    EMU_FUNC_CACHE_MODE_CA = 7,
    EMU_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    EMU_FUNC_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
};

// The emulated device's fixed limits, shared by attribute queries and launch checks.
namespace emu_limits {
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kMaxBlockDimXY = 1024;
constexpr int kMaxBlockDimZ = 64;
constexpr unsigned kMaxGridDimX = 2147483647u;
constexpr unsigned kMaxGridDimYZ = 65535u;
constexpr int kSharedPerBlock = 49152;          // default dynamic shared memory limit of a function
constexpr int kSharedPerBlockOptin = 232448;    // what cuFuncSetAttribute may raise it to
constexpr int kSharedPerMultiprocessor = 233472;
constexpr unsigned long long kTotalMemory = 16ull << 30;
}  // namespace emu_limits

namespace emu {

// Runs the body of an entry point that allocates: no C++ exception (in practice only std::bad_alloc) may reach
// the caller, which is C code (JCuda's JNI layer).
template <typename F>
CUresult guarded(F&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    } catch (...) {
        return CUDA_ERROR_UNKNOWN;
    }
}

}  // namespace emu
