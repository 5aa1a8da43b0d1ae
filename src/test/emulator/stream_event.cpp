// Streams, events and host callbacks. All work is synchronous, so a stream is only a handle and an event
// records the host clock when cuEventRecord is called (host time, not GPU time).
#include "state.h"

namespace {

constexpr unsigned kEventDisableTiming = 0x2;

// CU_STREAM_LEGACY and CU_STREAM_PER_THREAD.
bool special_stream(CUstream s) { return s == (CUstream) 0x1 || s == (CUstream) 0x2; }

CUresult check_event(CUevent e) {
    return emu::is_handle(e) && e->alive ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace

namespace emu {

CUresult check_stream(CUstream s) {
    if (s == nullptr || special_stream(s)) return CUDA_SUCCESS;
    return is_handle(s) && s->alive ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace emu

EMU_API CUresult cuStreamCreateWithPriority(CUstream* phStream, unsigned int flags, int priority) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (phStream == nullptr || flags > 1) return CUDA_ERROR_INVALID_VALUE;
    return emu::guarded([&]() -> CUresult {
        auto* s = new CUstream_st;
        s->ctx = ctx;
        s->flags = flags;
        s->priority = priority > 0 ? 0 : (priority < -5 ? -5 : priority);
        emu::add_handle(s);
        ctx->streams.push_back(s);
        *phStream = s;
        return CUDA_SUCCESS;
    });
}

EMU_API CUresult cuStreamCreate(CUstream* phStream, unsigned int flags) {
    return cuStreamCreateWithPriority(phStream, flags, 0);
}

EMU_API CUresult cuStreamDestroy_v2(CUstream s) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (s == nullptr || special_stream(s) || emu::check_stream(s) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_HANDLE;
    s->alive = false;
    auto& v = s->ctx->streams;
    for (size_t i = 0; i < v.size(); i++) {
        if (v[i] == s) {
            v.erase(v.begin() + (long) i);
            break;
        }
    }
    return CUDA_SUCCESS;
}

EMU_API CUresult cuStreamSynchronize(CUstream s) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    return emu::check_stream(s);
}

EMU_API CUresult cuStreamQuery(CUstream s) { return cuStreamSynchronize(s); }

EMU_API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    (void) flags;
    if (CUresult r = emu::check_stream(s)) return r;
    return check_event(e);
}

EMU_API CUresult cuStreamGetFlags(CUstream s, unsigned int* flags) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (CUresult r = emu::check_stream(s)) return r;
    if (flags == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *flags = s == nullptr || special_stream(s) ? 0 : s->flags;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuStreamGetPriority(CUstream s, int* priority) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (CUresult r = emu::check_stream(s)) return r;
    if (priority == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *priority = s == nullptr || special_stream(s) ? 0 : s->priority;
    return CUDA_SUCCESS;
}

EMU_API CUresult cuStreamGetCtx(CUstream s, CUcontext* pctx) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (CUresult r = emu::check_stream(s)) return r;
    if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
    *pctx = s == nullptr || special_stream(s) ? ctx : s->ctx;
    return CUDA_SUCCESS;
}

// Host functions run at once: everything queued before them has already completed.
EMU_API CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void* userData) {
    {
        EMU_LOCK;
        CUctx_st* ctx;
        if (CUresult r = emu::current_context(&ctx)) return r;
        if (CUresult r = emu::check_stream(s)) return r;
        if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
    }
    fn(userData);   // outside the lock: the callback may not call the driver, but must not deadlock if it does
    return CUDA_SUCCESS;
}

EMU_API CUresult cuStreamAddCallback(CUstream s, CUstreamCallback callback, void* userData, unsigned int flags) {
    {
        EMU_LOCK;
        CUctx_st* ctx;
        if (CUresult r = emu::current_context(&ctx)) return r;
        if (CUresult r = emu::check_stream(s)) return r;
        if (callback == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
    }
    callback(s, CUDA_SUCCESS, userData);
    return CUDA_SUCCESS;
}

EMU_API CUresult cuEventCreate(CUevent* phEvent, unsigned int flags) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (phEvent == nullptr || (flags & ~0xfu) != 0) return CUDA_ERROR_INVALID_VALUE;
    return emu::guarded([&]() -> CUresult {
        auto* e = new CUevent_st;
        e->ctx = ctx;
        e->flags = flags;
        emu::add_handle(e);
        ctx->events.push_back(e);
        *phEvent = e;
        return CUDA_SUCCESS;
    });
}

EMU_API CUresult cuEventRecord(CUevent e, CUstream s) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (CUresult r = check_event(e)) return r;
    if (CUresult r = emu::check_stream(s)) return r;
    e->recorded = true;
    e->when = std::chrono::steady_clock::now();
    return CUDA_SUCCESS;
}

EMU_API CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int flags) {
    (void) flags;
    return cuEventRecord(e, s);
}

EMU_API CUresult cuEventQuery(CUevent e) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    return check_event(e);
}

EMU_API CUresult cuEventSynchronize(CUevent e) { return cuEventQuery(e); }

EMU_API CUresult cuEventElapsedTime(float* ms, CUevent start, CUevent end) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
    if (check_event(start) != CUDA_SUCCESS || check_event(end) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_HANDLE;
    if (!start->recorded || !end->recorded) return CUDA_ERROR_INVALID_HANDLE;
    if ((start->flags | end->flags) & kEventDisableTiming) return CUDA_ERROR_INVALID_HANDLE;
    *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
    return CUDA_SUCCESS;
}

EMU_API CUresult cuEventDestroy_v2(CUevent e) {
    EMU_LOCK;
    CUctx_st* ctx;
    if (CUresult r = emu::current_context(&ctx)) return r;
    if (CUresult r = check_event(e)) return r;
    e->alive = false;
    auto& v = e->ctx->events;
    for (size_t i = 0; i < v.size(); i++) {
        if (v[i] == e) {
            v.erase(v.begin() + (long) i);
            break;
        }
    }
    return CUDA_SUCCESS;
}
