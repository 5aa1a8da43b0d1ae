// Warp intrinsics: lanes of a warp meet at __shfl*_sync, __ballot_sync, __all_sync, __any_sync and __syncwarp as a
// block meets at __syncthreads.
//
// A block's threads are numbered linearly (x fastest, then y, then z, as CUDA numbers them) and thread t is lane
// t % 32 of warp t / 32. A fiber that calls an intrinsic records what it brings (WarpCall), parks at the call site
// and goes back to the scheduler. When the last lane its mask names arrives at the same call site with the same
// mask, every one of them gets its result and is ready again; the last one goes on at once. A mask is checked as
// it arrives: the caller must be named, named lanes must exist and must not have exited, and two lanes meeting at
// one call site must name the same lanes if they name any of the same. A named lane that never arrives (it waits
// at __syncthreads or at another warp call site) is found when no fiber of the block can run any more
// (block.cpp). All of these are CUDA_ERROR_LAUNCH_FAILED, with one stderr line naming kernel, block, warp and lanes.
#include <stdio.h>
#include <string.h>

#include "emu_warp.h"
#include "worker.h"

namespace emu {
namespace {

// The operations, as cuda_emu.h passes them.
enum WarpOp { kShflIdx, kShflUp, kShflDown, kShflXor, kBallot, kAll, kAny, kSyncwarp, kGather };

const char* op_name(int op) {
    static const char* const names[] = {"__shfl_sync",   "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                                        "__ballot_sync", "__all_sync",     "__any_sync",       "__syncwarp",
                                        "a warp-wide matrix instruction (emu_warp_gather_bytes)"};
    return op >= 0 && op <= kGather ? names[op] : "an unknown warp intrinsic";
}

// A lane that does not take part in a shuffle gives the poison pattern, as unwritten memory does: reading an
// inactive lane is undefined on a GPU.
constexpr uint64_t kPoisonBits = ~0ull;

unsigned index_of(Worker* w, const Fiber& f) { return (unsigned) (&f - w->fibers.data()); }

unsigned block_threads(Worker* w) { return w->launch->block.x * w->launch->block.y * w->launch->block.z; }

// The lanes warp `warp` of the block has (fewer than 32 in a last, partial warp).
unsigned existing_lanes(Worker* w, unsigned warp) {
    unsigned left = block_threads(w) - warp * 32;
    return left >= 32 ? ~0u : (1u << left) - 1;
}

std::string hex(unsigned mask) {
    char buf[16];
    snprintf(buf, sizeof buf, "0x%08x", mask);
    return buf;
}

std::string where(Worker* w, unsigned warp) {
    return w->launch->kernel->name + " block (" + std::to_string(w->blockIdx.x) + "," + std::to_string(w->blockIdx.y) +
           "," + std::to_string(w->blockIdx.z) + ") warp " + std::to_string(warp);
}

std::string call_text(const Fiber& f) {
    return std::string(op_name(f.warp.op)) + " at " + code_text(f.site) + " with mask " + hex(f.warp.mask);
}

// The lanes of warp `warp` waiting at f's call site.
unsigned lanes_at(Worker* w, unsigned warp, const Fiber& f) {
    unsigned lanes = 0;
    for (unsigned lane = 0; lane < 32 && warp * 32 + lane < block_threads(w); lane++) {
        const Fiber& g = w->fibers[warp * 32 + lane];
        if (g.state == kAtWarp && g.site == f.site) lanes |= 1u << lane;
    }
    return lanes;
}

// The reason f's call cannot be made as it arrives, or "" when it may wait.
std::string arrival_error(Worker* w, const Fiber& f) {
    const unsigned self = index_of(w, f), warp = self / 32, lane = self % 32;
    const WarpCall& c = f.warp;
    if ((c.mask >> lane & 1) == 0) return "lane " + std::to_string(lane) + " calls " + call_text(f) + ", which does not name it";
    if ((c.mask & ~existing_lanes(w, warp)) != 0) {
        return "lane " + std::to_string(lane) + " calls " + call_text(f) + ", which names lanes " +
               hex(c.mask & ~existing_lanes(w, warp)) + " this block does not have";
    }
    if (c.op == kGather && (c.arg < 1 || c.arg > 256)) {
        return "lane " + std::to_string(lane) + " calls " + call_text(f) + " with " + std::to_string(c.arg) +
               " bytes, not 1 to 256";
    }
    if (c.op <= kShflXor && (c.width < 1 || c.width > 32 || (c.width & (c.width - 1)) != 0)) {
        return "lane " + std::to_string(lane) + " calls " + call_text(f) + " and width " + std::to_string(c.width) +
               ", not a power of 2 up to 32";
    }
    for (unsigned other = 0; other < 32; other++) {
        if ((c.mask >> other & 1) == 0 || other == lane) continue;
        const Fiber& g = w->fibers[warp * 32 + other];
        if (g.state == kExited) {
            return "lane " + std::to_string(lane) + " calls " + call_text(f) + " but named lane " + std::to_string(other) +
                   " has exited";
        }
    }
    for (unsigned other = 0; other < 32 && warp * 32 + other < block_threads(w); other++) {
        const Fiber& g = w->fibers[warp * 32 + other];
        if (other == lane || g.state != kAtWarp || g.site != f.site) continue;
        if (c.op == kGather && g.warp.op == kGather && g.warp.arg != c.arg) {
            return "lanes " + std::to_string(other) + " and " + std::to_string(lane) + " meet at " + op_name(c.op) +
                   " at " + code_text(f.site) + " with " + std::to_string(g.warp.arg) + " and " + std::to_string(c.arg) +
                   " bytes";
        }
        if ((g.warp.mask & c.mask) != 0 && g.warp.mask != c.mask) {
            return "lanes " + std::to_string(other) + " and " + std::to_string(lane) + " meet at " + op_name(c.op) +
                   " at " + code_text(f.site) + " with masks " + hex(g.warp.mask) + " and " + hex(c.mask);
        }
    }
    return "";
}

// The bits lane `lane` gets from a shuffle among `values` (of the lanes in `mask`).
uint64_t shuffle(const WarpCall& c, unsigned lane, const uint64_t* values, unsigned mask) {
    const unsigned width = (unsigned) c.width, first = lane & ~(width - 1), last = first + width - 1;
    unsigned source = lane;
    switch (c.op) {
    case kShflIdx:
        source = first + ((unsigned) c.arg & (width - 1));
        break;
    case kShflUp:   // lanes below the segment's first + delta keep their own value
        if (lane - first >= (unsigned) c.arg) source = lane - (unsigned) c.arg;
        break;
    case kShflDown:   // lanes whose source lies past the segment keep their own value
        if ((uint64_t) lane + (unsigned) c.arg <= last) source = lane + (unsigned) c.arg;
        break;
    case kShflXor:   // a source in a later segment (or past the warp) gives the lane's own value
        if ((lane ^ (unsigned) c.arg) <= last) source = lane ^ (unsigned) c.arg;
        break;
    }
    return (mask >> source & 1) != 0 ? values[source] : kPoisonBits;
}

// emu_warp_gather_bytes for lane g: every lane's bytes into g's buffer, by source lane (poison where a lane is not
// in the mask). The lanes' EmuGather records are on their own stacks, which stay put while they are parked.
void gather(Worker* w, unsigned warp, unsigned mask, Fiber& g) {
    const EmuGather* to = reinterpret_cast<const EmuGather*>(g.warp.value);
    unsigned char* out = static_cast<unsigned char*>(to->all);
    for (unsigned lane = 0; lane < 32; lane++) {
        if ((mask >> lane & 1) == 0) {
            memset(out + lane * to->bytes, 0xff, (size_t) to->bytes);
            continue;
        }
        const EmuGather* from = reinterpret_cast<const EmuGather*>(w->fibers[warp * 32 + lane].warp.value);
        memcpy(out + lane * to->bytes, from->mine, (size_t) to->bytes);
    }
    g.warp.result = 0;
}

// Completes the call f waits at when every lane its mask names is there; true when it did.
bool release_if_complete(Worker* w, Fiber& f) {
    const unsigned warp = index_of(w, f) / 32, mask = f.warp.mask;
    WarpState& s = w->warps[warp];
    // While the warp's parked lanes form one gathering (f's), they are the lanes at f's call site.
    const unsigned here = s.single ? s.parked : lanes_at(w, warp, f);
    if ((here & mask) != mask) return false;
    s.parked &= ~mask;
    if (s.parked == 0) s.single = true;
    w->released = true;
    uint64_t values[32];
    unsigned truths = 0;
    for (unsigned lane = 0; lane < 32; lane++) {
        values[lane] = kPoisonBits;
        if ((mask >> lane & 1) == 0) continue;
        values[lane] = w->fibers[warp * 32 + lane].warp.value;
        if (values[lane] != 0) truths |= 1u << lane;
    }
    for (unsigned lane = 0; lane < 32; lane++) {
        if ((mask >> lane & 1) == 0) continue;
        Fiber& g = w->fibers[warp * 32 + lane];
        switch (g.warp.op) {
        case kBallot: g.warp.result = truths; break;
        case kAll: g.warp.result = truths == mask; break;
        case kAny: g.warp.result = truths != 0; break;
        case kSyncwarp: g.warp.result = 0; break;
        case kGather: gather(w, warp, mask, g); break;
        default: g.warp.result = shuffle(g.warp, lane, values, mask); break;
        }
        g.state = kReady;
    }
    return true;
}

}  // namespace

std::string warp_stall_text(Worker* w, const Fiber& f) {
    const unsigned warp = index_of(w, f) / 32;
    const unsigned arrived = lanes_at(w, warp, f) & f.warp.mask;
    std::string what = where(w, warp) + ": lanes " + hex(arrived) + " wait at " + call_text(f) + " but lane ";
    for (unsigned lane = 0; lane < 32; lane++) {
        if ((f.warp.mask >> lane & 1) == 0 || (arrived >> lane & 1) != 0) continue;
        const Fiber& g = w->fibers[warp * 32 + lane];
        what += std::to_string(lane);
        if (g.state == kExited) return what + " has exited";
        if (g.state == kWaiting) return what + " waits at __syncthreads at " + code_text(g.site);
        return what + " waits at " + call_text(g);
    }
    return what + "? (none missing)";
}

}  // namespace emu

// One warp intrinsic (cuda_emu.h): parks the calling fiber at this call site until its mask's lanes have all
// arrived, and returns its result bits.
extern "C" __attribute__((noinline, visibility("hidden"))) uint64_t emu_warp_call(int op, unsigned mask, uint64_t value,
                                                                                  int arg, int width) {
    emu::Worker* w = emu::fiber_worker();
    if (w == nullptr) return value;   // not in a kernel
    emu::Fiber* f = w->current;
    f->site = __builtin_return_address(0);
    f->warp = emu::WarpCall{op, mask, value, arg, width, 0};
    const unsigned self = emu::index_of(w, *f), bit = 1u << (self % 32);
    emu::WarpState& s = w->warps[self / 32];
    // The common case, checked against the warp's masks: a well-formed mask that names the caller and no exited
    // lane, and no lane parked elsewhere or with another mask. Anything else gets arrival_error's full checks.
    const bool fast = s.single && (mask & bit) != 0 && (mask & ~emu::existing_lanes(w, self / 32)) == 0 &&
                      (mask & s.exited) == 0 && (op > emu::kShflXor || width == 32) &&
                      (s.parked == 0 || (s.site == f->site && s.mask == mask));
    if (!fast) {
        char what[512] = "";
        {   // the message's temporaries are freed before fault() drops this frame
            std::string error = emu::arrival_error(w, *f);
            if (!error.empty()) snprintf(what, sizeof what, "warp %u: %s", self / 32, error.c_str());
        }
        if (what[0] != 0) emu::fault(w, CUDA_ERROR_LAUNCH_FAILED, what);
        s.single = false;
    } else if (s.parked == 0) {
        s.site = f->site;
        s.mask = mask;
    }
    s.parked |= bit;
    f->state = emu::kAtWarp;
    if (!emu::release_if_complete(w, *f)) emu_fiber_switch(&f->sp, w->schedSp);
    return f->warp.result;
}

// __activemask(): the lanes of the caller's warp that have not exited. The emulator runs a warp's lanes one at a
// time, so "converged with the caller" has no meaning here; the lanes still alive is what a converged warp reports.
extern "C" __attribute__((visibility("hidden"))) unsigned emu_warp_active_mask(void) {
    emu::Worker* w = emu::fiber_worker();
    if (w == nullptr) return 1;
    const unsigned warp = emu::index_of(w, *w->current) / 32;
    unsigned lanes = 0;
    for (unsigned lane = 0; lane < 32 && warp * 32 + lane < emu::block_threads(w); lane++) {
        if (w->fibers[warp * 32 + lane].state != emu::kExited) lanes |= 1u << lane;
    }
    return lanes;
}
