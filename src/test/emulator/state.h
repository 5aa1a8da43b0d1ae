// Process-wide emulator state: configuration from the environment, the API lock, and the handle objects
// (contexts, modules, functions, streams, events) behind the driver's opaque pointers.
#pragma once
#include <stdint.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "api.h"

namespace emu {

struct KernelInfo;

enum class ThreadOrder { kForward, kReverse, kShuffle };

struct Config {
    int ccMajor = 9, ccMinor = 0;           // MECHSPEC_EMU_CC
    int driverVersion = 13000;              // MECHSPEC_EMU_DRIVER_VERSION
    bool exclusiveProcess = false;          // MECHSPEC_EMU_COMPUTE_MODE=exclusive-process
    std::string lockPath;                   // MECHSPEC_EMU_LOCK
    int workers = 4;                        // MECHSPEC_EMU_WORKERS
    ThreadOrder order = ThreadOrder::kForward;   // MECHSPEC_EMU_THREAD_ORDER=forward|reverse|shuffle[:SEED]
    uint64_t shuffleSeed = 0;
    bool adversarialMath = false;           // MECHSPEC_EMU_MATH=host|adversarial[:SEED]
    uint64_t mathSeed = 0;
    int multiprocessors = 4;                // MECHSPEC_EMU_SM_COUNT
    int l2Bytes = 4 << 20;                  // MECHSPEC_EMU_L2_BYTES
    bool verbose = false;                   // MECHSPEC_EMU_VERBOSE=1
};

// The settings in the environment now (state.cpp); reports each value it ignores.
Config read_config();

// Read once from the environment (the first call wins); valid before cuInit too. Inline, since the math
// functions ask on every call: an out-of-line call was 0.5% of an emulated run.
inline const Config& config() {
    static const Config c = read_config();
    return c;
}

// Every driver entry point holds this for its whole call, launches included: the emulator's tables never
// change while kernels run, and host threads see the driver as serialised (as one GPU would order them).
std::recursive_mutex& api_mutex();
#define EMU_LOCK std::lock_guard<std::recursive_mutex> emu_api_guard(emu::api_mutex())

bool initialized();
void set_initialized();

// The process's sticky error: the first execution error of any launch (CUDA_SUCCESS before one). CUDA's
// documentation says the process must then be terminated to use CUDA again, so it is never cleared: every
// later call that works on a context (resets, releases and destroys included) returns it.
CUresult sticky_error();
void set_sticky_error(CUresult error);

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
// the process's sticky error after a failed launch, CUDA_ERROR_INVALID_CONTEXT without a live context.
CUresult current_context(CUctx_st** out);

// Frees everything a context owns (allocations, modules, streams, events).
void release_context_resources(CUctx_st* ctx);

// Resolves a stream argument: null and the legacy/per-thread handles mean the current context.
CUresult check_stream(CUstream s);

// CUDA_ERROR_INVALID_HANDLE unless f is a function of a loaded module.
CUresult check_function(CUfunction f);

}  // namespace emu
