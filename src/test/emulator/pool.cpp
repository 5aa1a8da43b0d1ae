// The worker pool: blocks of a launch are handed out to the workers one at a time; the launch returns when
// every block has run (or one failed, which stops the handing out).
#include <stdio.h>
#include <sys/mman.h>

#include <condition_variable>
#include <new>
#include <thread>

#include "order.h"
#include "scheduler.h"
#include "state.h"

// Defined by the build's generated shared-memory unit: this thread's dynamic shared memory array.
extern "C" void emu_dynamic_shared_area(void** base, size_t* capacity);

namespace emu {

namespace {

void run_blocks(Worker* w, Launch& L) {
    w->launch = &L;
    w->shmBytes = L.sharedBytes;
    // The cache holds live allocations only, so it stays valid until something is freed (allocations never
    // overlap a live one); launches without a free in between keep it warm.
    if (w->cacheGeneration != allocation_generation()) {
        for (Range& r : w->cache) r = Range{0, 0};
        w->cacheGeneration = allocation_generation();
    }
    emu_blockDim = {L.block.x, L.block.y, L.block.z};
    emu_gridDim = {L.grid.x, L.grid.y, L.grid.z};
    // Blocks are handed out in this order: the k-th block to start is block_at(k).
    const ThreadOrder order = config().order;
    const Permutation shuffled(L.totalBlocks, mix64(config().shuffleSeed, L.number));
    auto block_at = [&](uint64_t k) {
        if (order == ThreadOrder::kReverse) return L.totalBlocks - 1 - k;
        return order == ThreadOrder::kShuffle ? shuffled(k) : k;
    };
    for (;;) {
        if (L.abort.load(std::memory_order_relaxed)) break;
        uint64_t b = L.next.fetch_add(1, std::memory_order_relaxed);
        if (b >= L.totalBlocks) break;
        if (!run_block(w, L, block_at(b))) {
            std::lock_guard<std::mutex> g(L.errorMutex);
            if (L.error == CUDA_SUCCESS) {   // only the first error of a launch is reported
                L.error = w->error;
                fprintf(stderr, "mechspec CUDA emulator: %s\n", w->message.c_str());
                fflush(stderr);
            }
            L.abort.store(true);
            break;
        }
    }
    w->launch = nullptr;
}

class Pool {
public:
    explicit Pool(int n) {
        // One aligned span per worker (see worker.h); the slack makes room for the alignment.
        size_t bytes = kWorkerSpan * (n + 1);
        void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            report("cannot reserve address space for fiber stacks");
            return;
        }
        uintptr_t base = ((uintptr_t) p + kWorkerSpan - 1) & ~(kWorkerSpan - 1);
        for (int i = 0; i < n; i++) {
            char* span = (char*) base + kWorkerSpan * i;
            if (mprotect(span, kHeaderBytes, PROT_READ | PROT_WRITE) != 0) {
                report("cannot map a worker's header");
                return;
            }
            auto* w = new (span) Worker;   // lives at its span's start, never destroyed
            w->index = i;
            w->stacks = span + kHeaderBytes;
            w->fibers.resize(kMaxFibers);
            workers_.push_back(w);
        }
        g_fiberBase = base;
        g_fiberSpan = kWorkerSpan * n;
        for (Worker* w : workers_) std::thread(&Pool::loop, this, w).detach();   // live as long as the process
    }

    CUresult run(Launch& L) {
        if (workers_.empty()) return CUDA_ERROR_OUT_OF_MEMORY;
        L.participants = L.totalBlocks < workers_.size() ? (int) L.totalBlocks : (int) workers_.size();
        std::unique_lock<std::mutex> lk(m_);
        launch_ = &L;
        finished_ = 0;
        generation_++;
        wake_.notify_all();
        done_.wait(lk, [&] { return finished_ == L.participants; });
        launch_ = nullptr;
        return L.error;
    }

private:
    void loop(Worker* w) {
        // Kernels run with the default floating-point environment, whatever the thread that started us had.
        unsigned mxcsr = 0x1f80;
        unsigned short fpucw = 0x037f;
        __asm__ __volatile__("ldmxcsr %0" ::"m"(mxcsr));
        __asm__ __volatile__("fldcw %0" ::"m"(fpucw));
        w->threadIdxSlot = &emu_threadIdx;
        void* base = nullptr;
        emu_dynamic_shared_area(&base, &w->shmCap);   // first touch of this thread's TLS, on its own stack
        w->shmBase = (uintptr_t) base;
        uint64_t seen = 0;
        for (;;) {
            Launch* L;
            int participants;
            {
                std::unique_lock<std::mutex> lk(m_);
                wake_.wait(lk, [&] { return generation_ != seen; });
                seen = generation_;
                L = launch_;
                // Read under the lock: for a worker that takes no part, the launch may end (and its Launch, on the
                // caller's stack, be gone) as soon as the lock is released.
                participants = L == nullptr ? 0 : L->participants;
            }
            if (w->index >= participants) continue;
            run_blocks(w, *L);
            std::lock_guard<std::mutex> lk(m_);
            if (++finished_ == L->participants) done_.notify_all();
        }
    }

    std::vector<Worker*> workers_;
    std::mutex m_;
    std::condition_variable wake_, done_;
    uint64_t generation_ = 0;
    Launch* launch_ = nullptr;
    int finished_ = 0;
};

}  // namespace

CUresult execute(Launch& L) {
    static Pool* pool = new Pool(config().workers);   // never destroyed: worker threads outlive static destructors
    return pool->run(L);
}

}  // namespace emu
