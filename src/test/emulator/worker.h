// Worker threads and their fibers, shared by the scheduler and the memory-access hooks.
#pragma once
#include <stdint.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "emu_builtins.h"
#include "memory.h"
#include "registry.h"

extern "C" void emu_fiber_switch(void** saveSp, void* toSp);
extern "C" void emu_fiber_start(void);

namespace emu {

constexpr unsigned kMaxWarpsPerBlock = (emu_limits::kMaxThreadsPerBlock + 31) / 32;

// kWaiting: at __syncthreads; kAtWarp: at a warp intrinsic (warp.cpp), until every lane its mask names arrives.
enum FiberState : uint8_t { kReady, kWaiting, kAtWarp, kExited, kFaulted };

// The warp intrinsic a fiber waits at (warp.cpp): what it brought and, once its warp met, what it gets back.
struct WarpCall {
    int op;              // WarpOp (warp.cpp)
    unsigned mask;       // the lanes it names
    uint64_t value;      // its operand's bits (the shuffled variable, the predicate)
    int arg;             // source lane, delta or lane mask (shuffles)
    int width;           // shuffle segment width
    uint64_t result;
};

// A __pipeline_memcpy_async not yet performed (pipeline.cpp).
struct PendingCopy {
    void* dst;
    const void* src;
    unsigned bytes, zeros;   // copies `bytes - zeros` bytes, then zero-fills `zeros`
    uint64_t batch;          // the __pipeline_commit batch it belongs to
};

struct Fiber {
    void* sp;            // saved stack pointer while not running; null before the fiber starts
    void* site;          // return address of the __syncthreads or warp intrinsic it waits at
    unsigned stack;      // which of the worker's stacks it runs on, once started
    uint3 tid;
    FiberState state;
    WarpCall warp;
    std::vector<PendingCopy> copies;   // its asynchronous copies, in issue order
    uint64_t commits;                  // its __pipeline_commit calls so far
};

// One launch, shared by the workers that run its blocks.
struct Launch {
    const KernelInfo* kernel;
    uint3 grid, block;
    unsigned sharedBytes;
    const unsigned char* args;
    uint64_t totalBlocks;
    uint64_t number;                       // launches before this one in the process (keys the shuffle)
    int participants;                      // workers that take part: min(workers, blocks)
    std::atomic<uint64_t> next{0};         // next block to hand out
    std::atomic<bool> abort{false};        // an execution error: stop handing out blocks
    std::mutex errorMutex;
    CUresult error = CUDA_SUCCESS;         // the first execution error
};

// A live allocation's bytes [base, end), as cached by the access hooks.
struct Range {
    uintptr_t base, end;
};
// The cache is direct-mapped by a multiplicative hash of the accessed address's 4 KiB page. Indexed by the page
// number itself (64 slots), the hot pages of a kernel's buffers often shared a slot and evicted each other on
// every access (17% of pn-mix's device accesses missed); with the hash and 1024 slots (16 KiB, of which a kernel
// touches a few lines) 0.06% do.
constexpr unsigned kCacheBits = 10;
constexpr unsigned kCacheSlots = 1u << kCacheBits;
inline unsigned cache_slot(uintptr_t a) { return (unsigned) (((a >> 12) * 0x9e3779b97f4a7c15ull) >> (64 - kCacheBits)); }

// One warp of the running block, as warp.cpp tracks it: the lanes parked at a warp intrinsic, the lanes that have
// exited, and, while every parked lane waits at one call site with one mask (`single`), that site and mask. Then an
// arrival is checked and counted against these masks; otherwise warp.cpp scans the warp's fibers.
struct WarpState {
    void* site;
    unsigned mask;
    unsigned parked;
    unsigned exited;
    bool single;
};

struct Worker {
    // Read by every access hook.
    uintptr_t shmBase = 0;                 // this thread's dynamic shared memory array
    size_t shmCap = 0;                     // its capacity
    size_t shmBytes = 0;                   // what the running launch asked for
    Range cache[kCacheSlots] = {};         // live allocations of recent device accesses
    uint64_t cacheGeneration = 0;          // the allocation_generation() it is valid for (pool.cpp)
    // The running block.
    Launch* launch = nullptr;
    uint3 blockIdx{};
    uint3* threadIdxSlot = nullptr;        // this thread's emu_threadIdx
    Fiber* current = nullptr;              // the running fiber, null in the scheduler
    void* schedSp = nullptr;               // the scheduler's context while a fiber runs
    bool aborted = false;
    bool released = false;                 // warp.cpp made parked lanes ready during the scheduler's pass
    CUresult error = CUDA_SUCCESS;
    std::string message;
    // Fibers and their stacks.
    std::vector<Fiber> fibers;
    char* stacks = nullptr;                // this worker's part of the fiber stack reservation
    unsigned stacksReady = 0;
    std::vector<unsigned> freeStacks;      // stacks no running or waiting fiber uses
    std::vector<unsigned> order;           // the fibers' order in this barrier phase (shuffled order only)
    WarpState warps[kMaxWarpsPerBlock];
    int index = 0;
};

// Each worker owns an aligned kWorkerSpan of address space: the Worker object itself at its start, then its
// fiber stacks. Code running on a fiber finds its worker by masking the stack pointer: the access hooks run on
// every load and store, and a thread-local lookup there would cost more than the check itself.
constexpr size_t kStackBytes = 256 << 10;  // per fiber; only the pages a kernel touches get memory
constexpr size_t kGuardBytes = 64 << 10;   // no-access gap below each stack
constexpr size_t kSlotBytes = kStackBytes + kGuardBytes;
constexpr size_t kHeaderBytes = 64 << 10;  // holds the Worker
constexpr unsigned kMaxFibers = emu_limits::kMaxThreadsPerBlock;
constexpr size_t kWorkerSpan = (size_t) 1 << 29;
static_assert(kHeaderBytes + kSlotBytes * kMaxFibers <= kWorkerSpan, "fiber stacks exceed a worker's span");
static_assert(sizeof(Worker) <= kHeaderBytes, "the Worker must fit its header");

extern uintptr_t g_fiberBase;   // all workers' spans: [g_fiberBase, g_fiberBase + g_fiberSpan)
extern size_t g_fiberSpan;

// The worker whose fiber is running on this stack, or null when not on a fiber.
inline Worker* fiber_worker() {
    uintptr_t sp;
    __asm__("mov %%rsp, %0" : "=r"(sp));
    return sp - g_fiberBase < g_fiberSpan ? (Worker*) (sp & ~(kWorkerSpan - 1)) : nullptr;
}

// Ends the running fiber with an execution error; the access it was about to make does not happen. Callers on
// the fiber must hold no objects that own memory: their frames are dropped, not unwound.
[[noreturn]] void fault(Worker* w, CUresult code, const char* what);

// The access hooks' check of one N-byte access (N = 2, 4, 8, 16 also checked for N-byte alignment); faults.
void check_access(uintptr_t a, size_t n, bool write);

// The stderr text for a block whose fibers are all stopped while some wait at a warp intrinsic that can no longer
// complete (warp.cpp); f is one of those waiting.
std::string warp_stall_text(Worker* w, const Fiber& f);

// "libcuda.so.1+0x1234": a code address for addr2line (block.cpp).
std::string code_text(void* pc);
std::string thread_text(const uint3& block, const uint3& thread);

}  // namespace emu
