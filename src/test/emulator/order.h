// The order blocks start and fibers run in (MECHSPEC_EMU_THREAD_ORDER): forward, reverse, or shuffled from a
// seed. A shuffle is a pure function of (seed, launch number, block, barrier phase), so a run is reproducible
// from its printed seed whatever the number of workers.
#pragma once
#include <stdint.h>

#include <vector>

namespace emu {

// SplitMix64's finaliser: a well-mixed 64-bit hash.
inline uint64_t mix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

inline uint64_t mix64(uint64_t a, uint64_t b) { return mix64(a ^ mix64(b)); }

// A permutation of [0, n) without a table (grids may have billions of blocks): a 4-round Feistel network on the
// smallest even number of bits that covers n, walking the cycle until the value falls inside [0, n).
class Permutation {
public:
    Permutation(uint64_t n, uint64_t key) : n_(n), key_(key) {
        while (half_ < 32 && (uint64_t(1) << (2 * half_)) < n) half_++;
    }

    uint64_t operator()(uint64_t i) const {
        if (n_ <= 1) return i;
        uint64_t x = i;
        do x = feistel(x);
        while (x >= n_);
        return x;
    }

private:
    uint64_t feistel(uint64_t x) const {
        const uint64_t mask = half_ == 32 ? 0xffffffffull : (uint64_t(1) << half_) - 1;
        uint64_t left = (x >> half_) & mask, right = x & mask;
        for (uint64_t round = 0; round < 4; round++) {
            uint64_t next = left ^ (mix64(key_, right * 4 + round) & mask);
            left = right;
            right = next;
        }
        return (left << half_) | right;
    }

    uint64_t n_, key_;
    unsigned half_ = 0;
};

// order = a uniformly shuffled 0..n-1: Fisher-Yates, each draw a 32-bit half of a counter-mode hash of key, taken
// into [0, i) by Lemire's multiply-shift with rejection (exactly uniform; a division only when a draw lands in the
// rejection zone). The block scheduler reshuffles at every barrier, so this runs once per thread per phase.
inline void shuffled_indices(std::vector<unsigned>& order, unsigned n, uint64_t key) {
    order.resize(n);
    for (unsigned i = 0; i < n; i++) order[i] = i;
    uint64_t counter = 0, bits = 0;
    unsigned left = 0;   // unused 32-bit halves in bits
    auto draw = [&]() -> uint32_t {
        if (left == 0) {
            bits = mix64(key, counter++);
            left = 2;
        }
        left--;
        uint32_t r = (uint32_t) bits;
        bits >>= 32;
        return r;
    };
    for (unsigned i = n; i > 1; i--) {
        uint64_t m = (uint64_t) draw() * i;
        if ((uint32_t) m < i) {
            const uint32_t zone = (uint32_t) -i % i;   // 2^32 mod i: the low products to reject
            while ((uint32_t) m < zone) m = (uint64_t) draw() * i;
        }
        const unsigned j = (unsigned) (m >> 32);
        const unsigned t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

}  // namespace emu
