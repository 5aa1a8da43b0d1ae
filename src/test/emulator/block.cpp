// Running one block: its threads as fibers on the calling worker, __syncthreads as a real barrier.
//
// The fibers run in thread order (or reversed, or shuffled afresh for every barrier phase: MECHSPEC_EMU_THREAD_ORDER).
// A fiber runs until it exits or reaches __syncthreads; when every live fiber waits at the same barrier, the barrier
// opens and they all run again. A fiber that faults is simply never resumed: kernels own no resources, so dropping
// its stack loses nothing, and nothing has to unwind through instrumented frames (see README.md).
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "order.h"
#include "scheduler.h"
#include "state.h"

__thread uint3 emu_threadIdx;
__thread uint3 emu_blockIdx;
__thread dim3 emu_blockDim;
__thread dim3 emu_gridDim;

namespace emu {

uintptr_t g_fiberBase = 0;
size_t g_fiberSpan = 0;

std::string thread_text(const uint3& b, const uint3& t) {
    char buf[96];
    snprintf(buf, sizeof buf, "block (%u,%u,%u) thread (%u,%u,%u)", b.x, b.y, b.z, t.x, t.y, t.z);
    return buf;
}

// A code address as "libcuda.so.1+0x1234" (for addr2line).
std::string code_text(void* pc) {
    Dl_info info;
    char buf[64];
    if (dladdr(pc, &info) != 0 && info.dli_fbase != nullptr) {
        const char* slash = strrchr(info.dli_fname, '/');
        snprintf(buf, sizeof buf, "%s+0x%lx", slash ? slash + 1 : info.dli_fname,
                 (unsigned long) ((char*) pc - (char*) info.dli_fbase));
    } else {
        snprintf(buf, sizeof buf, "%p", pc);
    }
    return buf;
}

namespace {

[[noreturn]] void fiber_main(Worker* w) {
    Fiber* f = w->current;
    try {
        w->launch->kernel->invoke(w->launch->kernel->fn, w->launch->args);
        f->state = kExited;
        const unsigned self = (unsigned) (f - w->fibers.data());
        w->warps[self / 32].exited |= 1u << (self % 32);
    } catch (...) {   // device code does not throw; this only keeps a C++ exception from escaping the fiber
        w->aborted = true;
        w->error = CUDA_ERROR_LAUNCH_FAILED;
        w->message = w->launch->kernel->name + " " + thread_text(w->blockIdx, f->tid) + ": C++ exception in kernel";
        f->state = kFaulted;
    }
    emu_fiber_switch(&f->sp, w->schedSp);
    __builtin_trap();   // a finished fiber is never resumed
}

// Makes sure stacks 0..n-1 of the worker are usable: the reservation exists, pages are committed as blocks grow.
bool ensure_stacks(Worker* w, unsigned n) {
    for (; w->stacksReady < n; w->stacksReady++) {
        char* stack = w->stacks + (size_t) w->stacksReady * kSlotBytes + kGuardBytes;
        if (mprotect(stack, kStackBytes, PROT_READ | PROT_WRITE) != 0) return false;
    }
    return true;
}

// A fresh fiber context whose first switch enters fiber_main(w) (see emu_fiber_start).
void* initial_sp(Worker* w, unsigned i) {
    // Stack tops 64 bytes apart modulo 4 KiB: equal offsets would put every fiber's hot frames in one cache set.
    char* top = w->stacks + (size_t) (i + 1) * kSlotBytes - (i % 64) * 64;
    void** sp = (void**) (top - 72);   // after the switch's 7 pops, rsp is 16-byte aligned as a call expects
    sp[0] = nullptr;                         // r15
    sp[1] = nullptr;                         // r14
    sp[2] = (void*) &fiber_main;             // r13: entry
    sp[3] = (void*) w;                       // r12: its argument
    sp[4] = nullptr;                         // rbx
    sp[5] = nullptr;                         // rbp: ends frame-pointer chains
    sp[6] = (void*) &emu_fiber_start;        // where the first switch jumps
    sp[7] = sp[8] = nullptr;
    return sp;
}

void fail_block(Worker* w, CUresult code, const std::string& message) {
    w->aborted = true;
    w->error = code;
    w->message = message;
}

std::string tid_text(const Fiber* f) {
    return "(" + std::to_string(f->tid.x) + "," + std::to_string(f->tid.y) + "," + std::to_string(f->tid.z) + ")";
}

}  // namespace

// Runs one block to completion; false (with w->error/message set) on an execution error.
bool run_block(Worker* w, Launch& L, uint64_t linear) {
    const uint3 b = L.block;
    const unsigned n = b.x * b.y * b.z;
    w->blockIdx = {(unsigned) (linear % L.grid.x), (unsigned) (linear / L.grid.x % L.grid.y),
                   (unsigned) (linear / ((uint64_t) L.grid.x * L.grid.y))};
    emu_blockIdx = w->blockIdx;
    w->aborted = false;
    if (!ensure_stacks(w, n)) {
        fail_block(w, CUDA_ERROR_OUT_OF_MEMORY, L.kernel->name + ": cannot map fiber stacks");
        return false;
    }
    // GPUs leave shared memory uninitialised: every block starts with the poison pattern (a NaN in every float
    // width), not with what the worker's previous block left there.
    memset((void*) w->shmBase, kPoisonByte, L.sharedBytes < w->shmCap ? L.sharedBytes : w->shmCap);
    for (unsigned i = 0; i < (n + 31) / 32; i++) w->warps[i] = WarpState{nullptr, 0, 0, 0, true};
    for (unsigned i = 0; i < n; i++) {
        Fiber& f = w->fibers[i];
        f.sp = nullptr;
        f.site = nullptr;
        f.tid = {i % b.x, i / b.x % b.y, i / (b.x * b.y)};
        f.state = kReady;
        f.copies.clear();
        f.commits = 0;
    }
    // A fiber takes a stack when it starts and gives it back when it ends, so a kernel without barriers runs
    // every thread on the same (cache-hot) stack; one with barriers needs a stack per waiting thread.
    w->freeStacks.clear();
    for (unsigned s = n; s-- > 0;) w->freeStacks.push_back(s);
    const ThreadOrder order = config().order;
    const Fiber* exited = nullptr;   // the first thread of the block that finished
    // Each barrier phase runs every live fiber, in thread order (reversed, or freshly shuffled for each phase), up
    // to its next __syncthreads or its end. A fiber that stops at a warp intrinsic waits there until the lanes its
    // mask names have all arrived (warp.cpp releases them, as ready); passes over the order repeat while a pass
    // released lanes (only a release makes a fiber ready mid-phase), so a phase ends with every live fiber at
    // __syncthreads or stuck at a warp intrinsic.
    for (uint64_t phase = 0;; phase++) {
        if (order == ThreadOrder::kShuffle) {
            shuffled_indices(w->order, n, mix64(mix64(config().shuffleSeed, L.number), mix64(linear, phase)));
        }
        for (unsigned i = 0; i < n; i++) {
            if (w->fibers[i].state == kWaiting) w->fibers[i].state = kReady;
        }
        do {
            w->released = false;
            for (unsigned k = 0; k < n; k++) {
                unsigned i = order == ThreadOrder::kForward ? k : order == ThreadOrder::kReverse ? n - 1 - k : w->order[k];
                Fiber& f = w->fibers[i];
                if (f.state != kReady) continue;
                if (f.sp == nullptr) {
                    f.stack = w->freeStacks.back();
                    w->freeStacks.pop_back();
                    f.sp = initial_sp(w, f.stack);
                }
                w->current = &f;
                *w->threadIdxSlot = f.tid;
                emu_fiber_switch(&w->schedSp, f.sp);
                w->current = nullptr;
                if (w->aborted) return false;
                if (f.state == kExited) {
                    w->freeStacks.push_back(f.stack);
                    if (exited == nullptr) exited = &f;
                }
            }
        } while (w->released);
        const Fiber* waiting = nullptr;     // the first, in this phase's order, at the barrier
        const Fiber* elsewhere = nullptr;   // one at another barrier
        for (unsigned k = 0; k < n; k++) {
            unsigned i = order == ThreadOrder::kForward ? k : order == ThreadOrder::kReverse ? n - 1 - k : w->order[k];
            const Fiber& f = w->fibers[i];
            if (f.state == kAtWarp) {
                fail_block(w, CUDA_ERROR_LAUNCH_FAILED, warp_stall_text(w, f));
                return false;
            }
            if (f.state != kWaiting) continue;
            if (waiting == nullptr) {
                waiting = &f;
            } else if (f.site != waiting->site && elsewhere == nullptr) {
                elsewhere = &f;
            }
        }
        if (waiting == nullptr) return true;   // every thread has finished
        if (exited != nullptr || elsewhere != nullptr) {
            std::string what = L.kernel->name + " " + thread_text(w->blockIdx, waiting->tid) +
                               ": divergent __syncthreads: it waits at " + code_text(waiting->site);
            what += exited != nullptr ? " but thread " + tid_text(exited) + " has exited"
                                      : ", thread " + tid_text(elsewhere) + " at " + code_text(elsewhere->site);
            fail_block(w, CUDA_ERROR_LAUNCH_FAILED, what);
            return false;
        }
        // Every live thread waits at the same barrier: it opens, and the next phase resumes them.
    }
}

[[noreturn]] void fault(Worker* w, CUresult code, const char* what) {
    Fiber* f = w->current;
    {   // the message is built and its temporaries freed before this fiber's stack is dropped
        fail_block(w, code, w->launch->kernel->name + " " + thread_text(w->blockIdx, f->tid) + ": " + what);
    }
    f->state = kFaulted;
    emu_fiber_switch(&f->sp, w->schedSp);
    __builtin_trap();   // a faulted fiber is never resumed
}

}  // namespace emu

// __syncthreads(): parks the fiber at this call site until the scheduler opens the barrier.
extern "C" __attribute__((noinline, visibility("hidden"))) void emu_syncthreads(void) {
    emu::Worker* w = emu::fiber_worker();
    if (w == nullptr) return;   // not in a kernel
    emu::Fiber* f = w->current;
    f->site = __builtin_return_address(0);
    f->state = emu::kWaiting;
    emu_fiber_switch(&f->sp, w->schedSp);
}

// A failed assert() in a kernel (build.sh points the kernels' __assert_fail here): CUDA_ERROR_ASSERT for the
// launch, as a device-side assert gives, instead of aborting the whole process.
extern "C" __attribute__((visibility("hidden"))) void emu_kernel_assert_fail(const char* expr, const char* file,
                                                                            unsigned line, const char* function) {
    char what[512];
    snprintf(what, sizeof what, "%s:%u: %s: assertion '%s' failed", file, line, function, expr);
    emu::Worker* w = emu::fiber_worker();
    if (w == nullptr) {
        emu::report("%s", what);
        abort();
    }
    emu::fault(w, CUDA_ERROR_ASSERT, what);
}
