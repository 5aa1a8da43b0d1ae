// Asynchronous copies (cuda_pipeline.h's primitives, cp.async on a GPU): global memory to shared memory in 4-, 8-
// or 16-byte pieces, grouped into batches by __pipeline_commit and waited for by __pipeline_wait_prior.
//
// Both addresses are checked when the copy is issued: aligned to the piece size, and in bounds as the access
// hooks check any access; the destination must lie in the block's dynamic shared memory and the source in device
// memory. The copy itself is made at the __pipeline_wait_prior that completes its batch, not before: a kernel that
// reads its shared destination before waiting sees what was there (the poison pattern, for fresh shared memory),
// as a GPU may show it too. Copies never waited for are dropped when the thread exits.
#include <stdio.h>
#include <string.h>

#include "worker.h"

namespace {

emu::Fiber* issuing_fiber(emu::Worker** out) {
    emu::Worker* w = emu::fiber_worker();
    *out = w;
    return w == nullptr ? nullptr : w->current;
}

}  // namespace

extern "C" __attribute__((visibility("hidden"))) void emu_pipeline_memcpy_async(void* dst, const void* src,
                                                                                size_t bytes, size_t zeros) {
    emu::Worker* w;
    emu::Fiber* f = issuing_fiber(&w);
    const uintptr_t d = (uintptr_t) dst, s = (uintptr_t) src;
    if (f == nullptr) {   // not in a kernel: copy at once
        memcpy(dst, src, bytes - zeros);
        memset((char*) dst + (bytes - zeros), 0, zeros);
        return;
    }
    char what[200] = "";
    if (bytes != 4 && bytes != 8 && bytes != 16) {
        snprintf(what, sizeof what, "__pipeline_memcpy_async of %zu bytes (cp.async copies 4, 8 or 16)", bytes);
    } else if (zeros > bytes) {
        snprintf(what, sizeof what, "__pipeline_memcpy_async of %zu bytes zero-fills %zu", bytes, zeros);
    }
    if (what[0] != 0) emu::fault(w, CUDA_ERROR_LAUNCH_FAILED, what);
    if (d - w->shmBase >= w->shmCap) {
        snprintf(what, sizeof what, "__pipeline_memcpy_async destination 0x%lx is not shared memory", (unsigned long) d);
    } else if (!emu::in_device_range(s)) {
        snprintf(what, sizeof what, "__pipeline_memcpy_async source 0x%lx is not global memory", (unsigned long) s);
    }
    if (what[0] != 0) emu::fault(w, CUDA_ERROR_ILLEGAL_ADDRESS, what);
    if (((d | s) & (bytes - 1)) != 0) {   // cp.async needs both addresses aligned to the piece size
        snprintf(what, sizeof what, "misaligned __pipeline_memcpy_async of %zu bytes from 0x%lx to 0x%lx", bytes,
                 (unsigned long) s, (unsigned long) d);
        emu::fault(w, CUDA_ERROR_MISALIGNED_ADDRESS, what);
    }
    emu::check_access(s, bytes, false);
    emu::check_access(d, bytes, true);
    f->copies.push_back(emu::PendingCopy{dst, src, (unsigned) bytes, (unsigned) zeros, f->commits});
}

extern "C" __attribute__((visibility("hidden"))) void emu_pipeline_commit(void) {
    emu::Worker* w;
    emu::Fiber* f = issuing_fiber(&w);
    if (f != nullptr) f->commits++;
}

// Completes every committed batch but the newest `prior`, in issue order.
extern "C" __attribute__((visibility("hidden"))) void emu_pipeline_wait_prior(size_t prior) {
    emu::Worker* w;
    emu::Fiber* f = issuing_fiber(&w);
    if (f == nullptr) return;
    const uint64_t done = f->commits > prior ? f->commits - prior : 0;   // batches [0, done) must be complete
    size_t kept = 0;
    for (size_t i = 0; i < f->copies.size(); i++) {
        emu::PendingCopy& c = f->copies[i];
        if (c.batch < done) {
            memcpy(c.dst, c.src, c.bytes - c.zeros);
            memset((char*) c.dst + (c.bytes - c.zeros), 0, c.zeros);
        } else {
            f->copies[kept++] = c;
        }
    }
    f->copies.resize(kept);
}
