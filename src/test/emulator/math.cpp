// The device math functions the kernels call. build.sh renames the kernels' calls of exp, expf, log, ... to the
// emu_math_* functions below (objcopy --redefine-sym), and cuda_emu.h maps __expf and __logf to them.
//
// MECHSPEC_EMU_MATH=host (default): the host's libm result. MECHSPEC_EMU_MATH=adversarial[:SEED]: a result the GPU
// could return by its documentation: the correctly rounded value moved by a pseudo-random number of ulps within
// the function's maximum ulp error (CUDA C++ Programming Guide, "Mathematical Functions"; the table is in
// README.md). The choice is a hash of the seed, the function and its arguments, so like a GPU's it is a fixed
// function of its inputs: a run is reproducible whatever the thread order. Special values the CUDA Math API
// documents (exp(±0) = 1, log(1) = +0, pow(x, ±0) = 1, ... and NaN, ±inf, ±0 results) are returned unchanged.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cmath>

#include "order.h"
#include "state.h"

namespace {

// A float's or double's position on the number line as an integer: consecutive values differ by 1 (±0 are 0).
template <typename T> struct Ordered;
template <> struct Ordered<float> {
    static int64_t of(float v) {
        uint32_t u;
        memcpy(&u, &v, 4);
        return (u >> 31) ? -(int64_t) (u & 0x7fffffffu) : (int64_t) u;
    }
    static float at(int64_t o) {
        uint32_t u = o < 0 ? 0x80000000u | (uint32_t) -o : (uint32_t) o;
        float v;
        memcpy(&v, &u, 4);
        return v;
    }
    static constexpr int64_t kMaxFinite = 0x7f7fffff;
    // The reference (double) is within 2^-28 of a float ulp: nearer than this to a rounding midpoint, the correctly
    // rounded float is uncertain.
    static constexpr double kUncertain = 0x1p-20;
};
template <> struct Ordered<double> {
    static int64_t of(double v) {
        uint64_t u;
        memcpy(&u, &v, 8);
        return (u >> 63) ? -(int64_t) (u & 0x7fffffffffffffffull) : (int64_t) u;
    }
    static double at(int64_t o) {
        uint64_t u = o < 0 ? 0x8000000000000000ull | (uint64_t) -o : (uint64_t) o;
        double v;
        memcpy(&v, &u, 8);
        return v;
    }
    static constexpr int64_t kMaxFinite = 0x7fefffffffffffffll;
    // The reference (glibc's long double functions, a few 2^-64 relative) is within 2^-10 of a double ulp.
    static constexpr double kUncertain = 0x1p-6;
};

enum Function : uint64_t { kExp = 1, kExp2, kExpm1, kLog, kLog2, kLog1p, kPow, kTanh, kFastExp, kFastLog, kEx2Ftz };

bool adversarial() { return emu::config().adversarialMath; }

uint64_t key(Function f, uint64_t precision, double x, double y = 0) {
    uint64_t bx, by;
    memcpy(&bx, &x, 8);
    memcpy(&by, &y, 8);
    return emu::mix64(emu::mix64(emu::config().mathSeed, f * 2 + precision), emu::mix64(bx, by));
}

// One of the values in ordered positions [lo, hi]: an end of the window half of the time (the errors a tolerance
// must survive are the largest ones), else any.
template <typename T>
T pick(int64_t lo, int64_t hi, uint64_t h) {
    switch (h % 4) {
        case 0: return Ordered<T>::at(lo);
        case 1: return Ordered<T>::at(hi);
        default: return Ordered<T>::at(lo + (int64_t) ((h >> 2) % (uint64_t) (hi - lo + 1)));
    }
}

// Keeps the window finite and on the reference's side of zero.
template <typename T>
T pick_in_window(int64_t lo, int64_t hi, long double exact, uint64_t h) {
    if (exact > 0 && lo < 0) lo = 0;
    if (exact < 0 && hi > 0) hi = 0;
    if (lo < -Ordered<T>::kMaxFinite) lo = -Ordered<T>::kMaxFinite;
    if (hi > Ordered<T>::kMaxFinite) hi = Ordered<T>::kMaxFinite;
    return pick<T>(lo, hi, h);
}

// A value within `ulps` of the correctly rounded `exact`. When `exact` lies so near a rounding midpoint that either
// neighbour may be the correctly rounded one, the window is what lies within `ulps` of both.
template <typename T>
T within_ulps(T host, long double exact, int ulps, uint64_t h) {
    T nearest = (T) exact;
    if (!isfinite(host) || host == 0 || !isfinite(nearest) || nearest == 0) return host;
    int64_t at = Ordered<T>::of(nearest);
    int64_t lo = at - ulps, hi = at + ulps;
    if (exact != (long double) nearest) {
        T other = nextafter(nearest, exact > nearest ? (T) INFINITY : (T) -INFINITY);
        long double step = fabsl((long double) other - (long double) nearest);
        if (fabsl(exact - (long double) nearest) / step > 0.5L - Ordered<T>::kUncertain) {
            int64_t o = Ordered<T>::of(other);
            lo = o > at ? o - ulps : lo;
            hi = o < at ? o + ulps : hi;
        }
    }
    return pick_in_window<T>(lo, hi, exact, h);
}

// A float within `bound` of `exact` (an absolute error bound).
float within_absolute(float host, double exact, double bound, uint64_t h) {
    if (!isfinite(host)) return host;
    double low = exact - bound, high = exact + bound;
    float lo = (float) low, hi = (float) high;
    if (lo < low) lo = nextafterf(lo, INFINITY);
    if (hi > high) hi = nextafterf(hi, -INFINITY);
    return pick<float>(Ordered<float>::of(lo), Ordered<float>::of(hi), h);
}

bool special(double x) { return !isfinite(x) || x == 0; }

// Recent adversarial results of the unary functions, per worker thread. Kernels ask for the same value many times
// (the packed attention recomputes exp(s - m) for every output column) and the wide reference is slow; a result is
// a fixed function of (function, precision, argument), so remembering it changes nothing.
struct Memo {
    uint64_t argument;
    uint64_t tag;      // 0: empty; else function * 2 + precision + 1
    double result;
};
constexpr size_t kMemoSlots = 4096;
thread_local Memo t_memo[kMemoSlots];

Memo& memo_slot(Function f, uint64_t precision, double x) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    return t_memo[emu::mix64(bits, f * 2 + precision) % kMemoSlots];
}

template <typename T, typename Perturb>
T remembered(Function f, uint64_t precision, double x, Perturb perturb) {
    uint64_t bits;
    memcpy(&bits, &x, 8);
    const uint64_t tag = f * 2 + precision + 1;
    Memo& m = memo_slot(f, precision, x);
    if (m.tag == tag && m.argument == bits) return (T) m.result;
    T r = perturb();
    m = Memo{bits, tag, (double) r};
    return r;
}

// Unary functions: host result, or a perturbed one; `exactAt` is an argument whose result is documented exact.
float unary_f(Function f, float (*host)(float), double (*reference)(double), int ulps, float x, double exactAt) {
    if (!adversarial() || special(x) || x == exactAt) return host(x);
    return remembered<float>(f, 0, x, [&] { return within_ulps<float>(host(x), reference(x), ulps, key(f, 0, x)); });
}

double unary_d(Function f, double (*host)(double), long double (*reference)(long double), int ulps, double x,
               double exactAt) {
    if (!adversarial() || special(x) || x == exactAt) return host(x);
    return remembered<double>(f, 1, x, [&] { return within_ulps<double>(host(x), reference(x), ulps, key(f, 1, x)); });
}

// pow(x, ±0) = 1, pow(1, y) = 1, pow(±0, y) and non-finite arguments are special values.
bool pow_special(double x, double y) { return y == 0 || x == 1 || special(x) || !isfinite(y); }

}  // namespace

#define EMU_MATH extern "C" __attribute__((visibility("hidden")))

// Single precision (reference: the double function). Bounds: README.md, "Adversarial math".
EMU_MATH float emu_math_expf(float x) { return unary_f(kExp, expf, exp, 2, x, 0); }
EMU_MATH float emu_math_exp2f(float x) { return unary_f(kExp2, exp2f, exp2, 2, x, 0); }
EMU_MATH float emu_math_expm1f(float x) { return unary_f(kExpm1, expm1f, expm1, 1, x, 0); }
EMU_MATH float emu_math_logf(float x) { return unary_f(kLog, logf, log, 1, x, 1); }
EMU_MATH float emu_math_log2f(float x) { return unary_f(kLog2, log2f, log2, 1, x, 1); }
EMU_MATH float emu_math_log1pf(float x) { return unary_f(kLog1p, log1pf, log1p, 1, x, 0); }
EMU_MATH float emu_math_tanhf(float x) { return unary_f(kTanh, tanhf, tanh, 2, x, 0); }
EMU_MATH float emu_math_powf(float x, float y) {
    float r = powf(x, y);
    if (!adversarial() || pow_special(x, y)) return r;
    return within_ulps<float>(r, pow((double) x, (double) y), 4, key(kPow, 0, x, y));
}

// Double precision (reference: the long double function).
EMU_MATH double emu_math_exp(double x) { return unary_d(kExp, exp, expl, 1, x, 0); }
EMU_MATH double emu_math_exp2(double x) { return unary_d(kExp2, exp2, exp2l, 1, x, 0); }
EMU_MATH double emu_math_expm1(double x) { return unary_d(kExpm1, expm1, expm1l, 1, x, 0); }
EMU_MATH double emu_math_log(double x) { return unary_d(kLog, log, logl, 1, x, 1); }
EMU_MATH double emu_math_log2(double x) { return unary_d(kLog2, log2, log2l, 1, x, 1); }
EMU_MATH double emu_math_log1p(double x) { return unary_d(kLog1p, log1p, log1pl, 1, x, 0); }
EMU_MATH double emu_math_tanh(double x) { return unary_d(kTanh, tanh, tanhl, 1, x, 0); }
EMU_MATH double emu_math_pow(double x, double y) {
    double r = pow(x, y);
    if (!adversarial() || pow_special(x, y)) return r;
    return within_ulps<double>(r, powl(x, y), 2, key(kPow, 1, x, y));
}

// The fast intrinsics: __expf within 2 + floor(|1.173 x|) ulps; __logf within 2^-21.41 absolute on [0.5, 2],
// else 3 ulps. (The GPU's versions also flush subnormals to zero; that is not modelled.)
EMU_MATH float emu_math_fast_expf(float x) {
    float r = expf(x);
    if (!adversarial() || special(x)) return r;
    int ulps = 2 + (int) floor(fabs(1.173 * x));
    return within_ulps<float>(r, exp((double) x), ulps, key(kFastExp, 0, x));
}

// PTX ex2.approx.ftz.f32 (warp_ops.cuh's ex2_ftz): exp2f's approximation without the range fix-up exp2f adds for
// results below 2^-126 -- within exp2f's 2 ulps, a subnormal x read as 0 and a result below 2^-126 returned as 0.
EMU_MATH float emu_math_ex2_ftz(float x) {
    if (std::fpclassify(x) == FP_SUBNORMAL) x = std::copysign(0.0f, x);
    float r = unary_f(kEx2Ftz, exp2f, exp2, 2, x, 0);
    return std::fabs(r) < 0x1p-126f ? 0.0f : r;
}

EMU_MATH float emu_math_fast_logf(float x) {
    float r = logf(x);
    if (!adversarial() || special(x) || x == 1) return r;
    // 2^-21.41, less 2^-10 of it for the reference's own error.
    if (x >= 0.5f && x <= 2.0f) return within_absolute(r, log((double) x), exp2(-21.41) * (1 - 0x1p-10), key(kFastLog, 0, x));
    return within_ulps<float>(r, log((double) x), 3, key(kFastLog, 0, x));
}
