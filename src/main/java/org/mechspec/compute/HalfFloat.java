package org.mechspec.compute;

/**
 * IEEE binary16 (fp16) and bfloat16 rounding from fp64, round-to-nearest, ties to even.
 * Rounds directly from the double: going through float first would round twice and break ties.
 */
public final class HalfFloat {
    private HalfFloat() {
    }

    /** fp16 bits of the nearest half to x (ties to even; overflow → ±inf; NaN → quiet NaN). */
    public static short toHalfBits(double x) {
        long bits = Double.doubleToRawLongBits(x);
        int sign = (int) ((bits >>> 48) & 0x8000);
        if (Double.isNaN(x)) {
            return (short) (sign | 0x7E00);
        }
        double a = Math.abs(x);
        if (a >= 65520.0) { // halfway between max half 65504 and 2^16 rounds up to inf
            return (short) (sign | 0x7C00);
        }
        if (a < 0x1.0p-14) {
            // Subnormal range: value = m · 2^-24 with integer m; rint ties to even.
            int m = (int) Math.rint(a * 0x1.0p24);
            return (short) (sign | m); // m == 1024 carries into the smallest normal exactly
        }
        int exp = Math.getExponent(a); // -14 .. 15
        double scaled = a * Math.scalb(1.0, 10 - exp); // in [1024, 2048)
        int m = (int) Math.rint(scaled);
        int e = exp + 15;
        if (m == 2048) {
            m = 1024;
            e++;
        }
        if (e >= 31) {
            return (short) (sign | 0x7C00);
        }
        return (short) (sign | (e << 10) | (m - 1024));
    }

    /** The double value of fp16 bits. */
    public static double fromHalfBits(short h) {
        int bits = h & 0xFFFF;
        double sign = (bits & 0x8000) != 0 ? -1.0 : 1.0; // a double, so that -0.0 keeps its sign
        int e = (bits >>> 10) & 0x1F;
        int m = bits & 0x3FF;
        if (e == 0x1F) {
            return m == 0 ? sign * Double.POSITIVE_INFINITY : Double.NaN;
        }
        if (e == 0) {
            return sign * m * 0x1.0p-24;
        }
        return sign * (1024 + m) * Math.scalb(1.0, e - 25);
    }

    /** x rounded to the nearest fp16 value, as a double. */
    public static double roundToHalf(double x) {
        return fromHalfBits(toHalfBits(x));
    }

    /** True when x is exactly representable in fp16. */
    public static boolean isHalfRepresentable(double x) {
        return Double.isNaN(x) || roundToHalf(x) == x;
    }

    /** bfloat16 bits of the nearest bf16 to x (ties to even). */
    public static short toBfloat16Bits(double x) {
        if (Double.isNaN(x)) {
            return (short) ((Double.doubleToRawLongBits(x) >>> 48 & 0x8000) | 0x7FC0);
        }
        // bf16 keeps 8 significand bits and float's exponent range; round the double to 8 bits first,
        // then the float conversion is exact (or overflows to inf exactly as float would).
        double a = Math.abs(x);
        if (a != 0 && a < Float.MIN_NORMAL) {
            double q = Math.rint(a * 0x1.0p133) * 0x1.0p-133; // bf16 subnormal step 2^-133
            return (short) (Float.floatToRawIntBits((float) Math.copySign(q, x)) >>> 16);
        }
        if (a == 0 || Double.isInfinite(a)) {
            return (short) (Float.floatToRawIntBits((float) x) >>> 16);
        }
        int exp = Math.getExponent(a);
        double q = Math.rint(a * Math.scalb(1.0, 7 - exp)) * Math.scalb(1.0, exp - 7);
        return (short) (Float.floatToRawIntBits((float) Math.copySign(q, x)) >>> 16);
    }

    /** The value of bfloat16 bits {@code b} (exact). */
    public static double fromBfloat16Bits(short b) {
        return Float.intBitsToFloat((b & 0xFFFF) << 16);
    }

    /** {@code x} rounded to the nearest bfloat16, ties to even, as a double. */
    public static double roundToBfloat16(double x) {
        return fromBfloat16Bits(toBfloat16Bits(x));
    }
}
