// Contexts: the device's primary context (refcounted), created contexts, the per-thread current-context stack,
// sticky errors, limits, and the exclusive-process compute mode (an flock held while any context lives).
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "memory.h"
#include "state.h"

namespace {

thread_local std::vector<CUctx_st*> t_stack;   // top = the thread's current context
unsigned long long g_nextId = 1;
int g_liveContexts = 0;
int g_lockFd = -1;

CUctx_st* primary() {
    static CUctx_st* p = [] {
        auto* c = new CUctx_st;
        c->primary = true;
        c->id = g_nextId++;
        emu::add_handle(c);
        return c;
    }();
    return p;
}

// Exclusive-process mode: the first live context takes the lock file, the last one gives it back.
CUresult acquire_device() {
    if (g_liveContexts == 0 && emu::config().exclusiveProcess) {
        const char* path = emu::config().lockPath.c_str();
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) {
            emu::report("cannot open the exclusive-process lock %s: %s", path, strerror(errno));
            return CUDA_ERROR_DEVICE_UNAVAILABLE;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            emu::report("device is in exclusive-process mode and another process holds %s", path);
            close(fd);
            return CUDA_ERROR_DEVICE_UNAVAILABLE;
        }
        g_lockFd = fd;
    }
    g_liveContexts++;
    return CUDA_SUCCESS;
}

void release_device() {
    if (--g_liveContexts == 0 && g_lockFd >= 0) {
        flock(g_lockFd, LOCK_UN);
        close(g_lockFd);
        g_lockFd = -1;
    }
}

void reset_limits(CUctx_st* c) {
    for (size_t& l : c->limits) l = 0;
    c->limits[0] = 1024;        // stack size
    c->limits[1] = 1 << 20;     // printf FIFO
    c->limits[2] = 8 << 20;     // malloc heap
    c->limits[3] = 2;           // device runtime sync depth
    c->limits[4] = 2048;        // device runtime pending launches
}

bool live_context(CUctx_st* c) { return emu::is_handle(c) && c->alive; }

// Every context call fails before cuInit, and with the sticky error once a launch has failed: nothing, not even
// a reset or a destroy, makes CUDA usable again in this process.
CUresult context_call_allowed() {
    if (!emu::initialized()) return CUDA_ERROR_NOT_INITIALIZED;
    return emu::sticky_error();
}

// Drops every occurrence of a dead context from the calling thread's stack (others find it dead when used).
void forget_on_this_thread(CUctx_st* c) {
    for (CUctx_st*& e : t_stack) {
        if (e == c) e = nullptr;
    }
    while (!t_stack.empty() && t_stack.back() == nullptr) t_stack.pop_back();
}

}  // namespace

namespace emu {

CUresult current_context(CUctx_st** out) {
    if (!initialized()) return CUDA_ERROR_NOT_INITIALIZED;
    if (CUresult r = sticky_error()) return r;
    CUctx_st* c = t_stack.empty() ? nullptr : t_stack.back();
    if (c == nullptr || !c->alive) return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return CUDA_SUCCESS;
}

void release_context_resources(CUctx_st* ctx) {
    for (CUmod_st* m : ctx->modules) {
        m->alive = false;
        for (auto& f : m->functions) f.second->alive = false;
    }
    ctx->modules.clear();
    for (CUstream_st* s : ctx->streams) s->alive = false;
    ctx->streams.clear();
    for (CUevent_st* e : ctx->events) e->alive = false;
    ctx->events.clear();
    free_context_allocations(ctx);
    reset_limits(ctx);
}

}  // namespace emu

EMU_API CUresult cuDevicePrimaryCtxRetain(CUcontext* pctx, CUdevice dev) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    CUctx_st* p = nullptr;
    if (CUresult r = emu::guarded([&]() -> CUresult {
            p = primary();
            return CUDA_SUCCESS;
        })) {
        return r;
    }
    if (p->refcount == 0) {
        if (CUresult r = acquire_device()) return r;
        p->alive = true;
        reset_limits(p);
    }
    p->refcount++;
    *pctx = p;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    CUctx_st* p = primary();
    if (p->refcount == 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (--p->refcount == 0) {
        emu::release_context_resources(p);
        p->alive = false;
        release_device();
    }
    return CUDA_SUCCESS;
}

// Frees all of the primary context's resources; the handle (and the retain count) stay, so the caller can carry
// on with the same context. After a failed launch it returns the sticky error and changes nothing.
EMU_API CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    CUctx_st* p = primary();
    if (p->alive) emu::release_context_resources(p);
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int* flags, int* active) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    if (flags == nullptr || active == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = primary()->flags;
    *active = primary()->refcount > 0 ? 1 : 0;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    primary()->flags = flags;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    if (CUresult r = acquire_device()) return r;
    CUresult r = emu::guarded([&]() -> CUresult {
        auto* c = new CUctx_st;
        c->id = g_nextId++;
        c->flags = flags;
        c->alive = true;
        reset_limits(c);
        emu::add_handle(c);
        t_stack.push_back(c);
        *pctx = c;
        return CUDA_SUCCESS;
    });
    if (r != CUDA_SUCCESS) release_device();
    return r;
}

EMU_API CUresult cuCtxDestroy_v2(CUcontext ctx) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (!live_context(ctx) || ctx->primary) return CUDA_ERROR_INVALID_CONTEXT;
    emu::release_context_resources(ctx);
    ctx->alive = false;
    forget_on_this_thread(ctx);
    release_device();
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxSetCurrent(CUcontext ctx) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (ctx == nullptr) {
        if (!t_stack.empty()) t_stack.pop_back();
        return CUDA_SUCCESS;
    }
    if (!live_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    if (t_stack.empty()) t_stack.push_back(ctx);
    else t_stack.back() = ctx;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxGetCurrent(CUcontext* pctx) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pctx = t_stack.empty() ? nullptr : t_stack.back();
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (!live_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    t_stack.push_back(ctx);
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxPopCurrent_v2(CUcontext* pctx) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (t_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx != nullptr) *pctx = t_stack.back();
    t_stack.pop_back();
    return CUDA_SUCCESS;
}

// Work is never pending (launches and copies complete before they return), so this only reports the sticky error.
EMU_API CUresult cuCtxSynchronize(void) {
    EMU_LOCK;
    CUctx_st* c;
    return emu::current_context(&c);
}

EMU_API CUresult cuCtxGetDevice(CUdevice* device) {
    EMU_LOCK;
    CUctx_st* c;
    if (CUresult r = emu::current_context(&c)) return r;
    if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *device = 0;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxGetFlags(unsigned int* flags) {
    EMU_LOCK;
    CUctx_st* c;
    if (CUresult r = emu::current_context(&c)) return r;
    if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = c->flags;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxGetId(CUcontext ctx, unsigned long long* ctxId) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (ctxId == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ctx == nullptr) {
        if (CUresult r = emu::current_context(&ctx)) return r;
    }
    if (!live_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    *ctxId = ctx->id;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int* version) {
    EMU_LOCK;
    if (CUresult r = context_call_allowed()) return r;
    if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (ctx == nullptr) {
        if (CUresult r = emu::current_context(&ctx)) return r;
    }
    if (!live_context(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020;   // the driver API version of _v2 contexts
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxGetLimit(size_t* pvalue, int limit) {
    EMU_LOCK;
    CUctx_st* c;
    if (CUresult r = emu::current_context(&c)) return r;
    if (pvalue == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (limit < 0 || limit > 4) return CUDA_ERROR_UNSUPPORTED_LIMIT;
    *pvalue = c->limits[limit];
    return CUDA_SUCCESS;
}

// Accepted and stored; nothing in the emulator depends on them.
EMU_API CUresult cuCtxSetLimit(int limit, size_t value) {
    EMU_LOCK;
    CUctx_st* c;
    if (CUresult r = emu::current_context(&c)) return r;
    if (limit < 0 || limit > 4) return CUDA_ERROR_UNSUPPORTED_LIMIT;
    c->limits[limit] = value;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxGetCacheConfig(int* config) {
    EMU_LOCK;
    CUctx_st* c;
    if (CUresult r = emu::current_context(&c)) return r;
    if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *config = 0;   // CU_FUNC_CACHE_PREFER_NONE
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxSetCacheConfig(int config) {
    EMU_LOCK;
    CUctx_st* c;
    if (CUresult r = emu::current_context(&c)) return r;
    return config >= 0 && config <= 3 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EMU_API CUresult cuCtxGetSharedMemConfig(int* config) {
    EMU_LOCK;
    CUctx_st* c;
    if (CUresult r = emu::current_context(&c)) return r;
    if (config == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *config = 1;   // CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE
    return CUDA_SUCCESS;
}

EMU_API CUresult cuCtxSetSharedMemConfig(int config) {
    EMU_LOCK;
    CUctx_st* c;
    if (CUresult r = emu::current_context(&c)) return r;
    return config >= 0 && config <= 2 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EMU_API CUresult cuCtxGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
    EMU_LOCK;
    CUctx_st* c;
    if (CUresult r = emu::current_context(&c)) return r;
    if (leastPriority != nullptr) *leastPriority = 0;
    if (greatestPriority != nullptr) *greatestPriority = -5;
    return CUDA_SUCCESS;
}
