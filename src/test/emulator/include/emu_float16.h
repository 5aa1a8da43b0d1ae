// Round-to-nearest-even conversions between double and the 16-bit float formats (fp16, bf16), shared by the
// cuda_fp16.h / cuda_bf16.h stand-ins. Everything works on the double's bits, so a conversion from double
// rounds exactly once (going through float first would round twice and break ties).
#pragma once
#include <stdint.h>
#include <string.h>

namespace emu_fp {

// Bits of the value nearest to x in a format with EXP exponent bits and MAN stored mantissa bits (IEEE-style:
// subnormals, all-ones exponent for inf/NaN). Ties go to the even code; overflow gives inf; sign of zero kept;
// NaN gives the quiet NaN with x's sign.
template <int EXP, int MAN>
inline uint32_t round_from_double(double x) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    const uint32_t sign = (uint32_t) (b >> 63) << (EXP + MAN);
    const uint64_t a = b & 0x7fffffffffffffffull;
    const uint32_t inf = ((1u << EXP) - 1u) << MAN;
    if (a > 0x7ff0000000000000ull) return sign | inf | (1u << (MAN - 1));   // NaN
    if (a == 0x7ff0000000000000ull) return sign | inf;
    if (a == 0) return sign;
    // |x| = m * 2^e exactly.
    int e = (int) (a >> 52);
    uint64_t m = a & ((1ull << 52) - 1);
    if (e == 0) e = 1; else m |= 1ull << 52;
    e -= 1075;
    const int bias = (1 << (EXP - 1)) - 1;
    const int emin = 1 - bias;                               // exponent of the smallest normal
    const int ilog = 63 - __builtin_clzll(m) + e;            // floor(log2 |x|)
    const int scale = ilog > emin ? ilog : emin;             // subnormals share the smallest normal's quantum
    const int shift = scale - MAN - e;                       // drop this many low bits of m (always > 0 here)
    uint64_t r = 0;
    if (shift < 64) {
        r = m >> shift;
        const uint64_t rem = m & ((1ull << shift) - 1);
        const uint64_t half = 1ull << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
    }
    // Normal: ((biased exponent - 1) << MAN) + r, where r includes the hidden bit, so a carry to 2^(MAN+1)
    // moves into the next binade by itself; subnormal: the exponent term is 0 and r = 2^MAN is the smallest normal.
    const uint64_t code = ((uint64_t) (scale + bias - 1) << MAN) + r;
    return code >= inf ? (sign | inf) : (sign | (uint32_t) code);
}

constexpr double pow2(int e) { return e == 0 ? 1.0 : e > 0 ? 2.0 * pow2(e - 1) : 0.5 * pow2(e + 1); }

// The double value of a code of the same format (exact). Built from bits: kernels decode a lot of these.
template <int EXP, int MAN>
inline double to_double(uint32_t h) {
    const uint32_t expMask = (1u << EXP) - 1u;
    const uint32_t E = (h >> MAN) & expMask;
    const uint64_t M = h & ((1u << MAN) - 1u);
    const int bias = (1 << (EXP - 1)) - 1;
    uint64_t bits;
    if (E == expMask) {
        bits = M == 0 ? 0x7ff0000000000000ull : 0x7ff8000000000000ull;   // inf, quiet NaN
    } else if (E == 0) {
        constexpr double quantum = pow2(1 - ((1 << (EXP - 1)) - 1) - MAN);   // smallest subnormal
        double v = (double) M * quantum;   // exact: M has at most MAN bits
        memcpy(&bits, &v, sizeof bits);
    } else {
        bits = ((uint64_t) ((int) E - bias + 1023) << 52) | (M << (52 - MAN));
    }
    bits |= (uint64_t) ((h >> (EXP + MAN)) & 1u) << 63;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

}  // namespace emu_fp
