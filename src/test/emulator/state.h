// Process-wide emulator state: configuration from the environment, the API lock, and the handle objects
// (contexts, modules, functions, streams, events) behind the driver's opaque pointers.
#pragma once
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "api.h"

namespace emu {

struct KernelInfo;

struct Config {
    int ccMajor = 9, ccMinor = 0;           // MECHSPEC_EMU_CC
    int driverVersion = 13000;              // MECHSPEC_EMU_DRIVER_VERSION
    bool exclusiveProcess = false;          // MECHSPEC_EMU_COMPUTE_MODE=exclusive-process
    std::string lockPath;                   // MECHSPEC_EMU_LOCK
    int workers = 4;                        // MECHSPEC_EMU_WORKERS
    bool reverseOrder = false;              // MECHSPEC_EMU_THREAD_ORDER=reverse
    bool verbose = false;                   // MECHSPEC_EMU_VERBOSE=1
};

// Read once from the environment (the first call wins); valid before cuInit too.
const Config& config();

// Every driver entry point holds this for its whole call, launches included: the emulator's tables never
// change while kernels run, and host threads see the driver as serialised (as one GPU would order them).
std::recursive_mutex& api_mutex();
#define EMU_LOCK std::lock_guard<std::recursive_mutex> emu_api_guard(emu::api_mutex())

bool initialized();
void set_initialized();

// One line on stderr, prefixed "mechspec CUDA emulator: ".
void report(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Handles are never freed (a destroyed one is marked dead), so a stale handle is recognised, not reused.
bool is_handle(const void* p);
void add_handle(const void* p);

}  // namespace emu

struct CUctx_st {
    unsigned long long id = 0;
    bool primary = false;
    bool alive = false;              // created and not destroyed; for the primary context: refcount > 0
    int refcount = 0;                // primary context only
    unsigned flags = 0;
    CUresult sticky = CUDA_SUCCESS;  // the first execution error; returned by every later call on the context
    size_t limits[10] = {};
    std::vector<CUmod_st*> modules;
    std::vector<CUstream_st*> streams;
    std::vector<CUevent_st*> events;
};

struct CUfunc_st {
    CUmod_st* module = nullptr;
    const emu::KernelInfo* kernel = nullptr;
    std::string name;
    int maxDynamicShared = emu_limits::kSharedPerBlock;
    int carveout = -1;
    bool alive = true;
};

struct CUmod_st {
    CUctx_st* ctx = nullptr;
    std::map<std::string, CUfunc_st*> functions;
    std::string selected;            // which image entry was "loaded", for messages only
    int ptxVersion = 0;              // CU_FUNC_ATTRIBUTE_PTX_VERSION: the image's PTX .target, e.g. 80
    int binaryVersion = 0;           // CU_FUNC_ATTRIBUTE_BINARY_VERSION: the device's compute capability, e.g. 90
    bool alive = true;
};

struct CUstream_st {
    CUctx_st* ctx = nullptr;
    unsigned flags = 0;
    int priority = 0;
    bool alive = true;
};

struct CUevent_st {
    CUctx_st* ctx = nullptr;
    unsigned flags = 0;
    bool recorded = false;
    std::chrono::steady_clock::time_point when;
    bool alive = true;
};

namespace emu {

// The calling thread's current context for a call that works on it: CUDA_ERROR_NOT_INITIALIZED before cuInit,
// CUDA_ERROR_INVALID_CONTEXT without a live one, else the context's sticky error (when withSticky).
CUresult current_context(CUctx_st** out, bool withSticky = true);

// Frees everything a context owns (allocations, modules, streams, events) and clears its sticky error.
void release_context_resources(CUctx_st* ctx);

// Resolves a stream argument: null and the legacy/per-thread handles mean the current context.
CUresult check_stream(CUstream s);

// CUDA_ERROR_INVALID_HANDLE unless f is a function of a loaded module.
CUresult check_function(CUfunction f);

}  // namespace emu
