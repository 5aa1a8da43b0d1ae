package org.mechspec.compute;

/**
 * Asymmetric quantization of one group (the CPU definition; {@code pnmix.cu} computes the same bits).
 * b ≥ 2 bits: scale = fp16((max − min)/(2^b − 1)), zero = fp16(min), code = clamp(rint((x − zero)/scale)),
 * computed from the fp16-rounded scale and zero. 1 bit: see {@link OneBitLevels}. A scale of 0 gives
 * codes 0. Sums of fp16 values are exact in fp64 for groups this size, so the means do not depend on order.
 */
public final class GroupQuantizer {
    private GroupQuantizer() {
    }

    /**
     * Quantizes {@code count} values {@code x[from + i·stride]} into {@code codes[codeFrom + i·codeStride]}.
     *
     * @return fp16 scale bits in the high 16 bits, fp16 zero bits in the low 16 bits
     */
    public static int quantize(double[] x, int from, int stride, int count, int bits, OneBitLevels oneBit,
                               int[] codes, int codeFrom, int codeStride) {
        BitPacking.requireBits("group", bits);
        if (count <= 0) {
            throw new IllegalArgumentException("a quantization group needs at least one value, got " + count);
        }
        if (bits == 1 && oneBit == OneBitLevels.CONDITIONAL_MEANS) {
            return twoLevel(x, from, stride, count, codes, codeFrom, codeStride);
        }
        // Plain comparisons keep the first of equal values (−0.0 vs 0.0), exactly as the CUDA twin does.
        double min = x[from];
        double max = x[from];
        for (int i = 1; i < count; i++) {
            double v = x[from + i * stride];
            if (v < min) {
                min = v;
            }
            if (v > max) {
                max = v;
            }
        }
        int levels = (1 << bits) - 1;
        short scaleBits = half((max - min) / levels, "scale");
        short zeroBits = half(min, "zero");
        double scale = HalfFloat.fromHalfBits(scaleBits);
        double zero = HalfFloat.fromHalfBits(zeroBits);
        for (int i = 0; i < count; i++) {
            int code = 0;
            if (scale != 0.0) {
                double r = Math.rint((x[from + i * stride] - zero) / scale);
                code = (int) Math.max(0.0, Math.min(levels, r));
            }
            codes[codeFrom + i * codeStride] = code;
        }
        return pack(scaleBits, zeroBits);
    }

    private static int twoLevel(double[] x, int from, int stride, int count, int[] codes, int codeFrom, int codeStride) {
        double sum = 0.0;
        for (int i = 0; i < count; i++) {
            sum += x[from + i * stride];
        }
        double mean = sum / count;
        double lowSum = 0.0;
        double highSum = 0.0;
        int lowCount = 0;
        for (int i = 0; i < count; i++) {
            double v = x[from + i * stride];
            if (v >= mean) {
                highSum += v;
            } else {
                lowSum += v;
                lowCount++;
            }
        }
        double high = highSum / (count - lowCount);
        short zeroBits;
        short scaleBits;
        if (lowCount == 0) { // every value equals the mean: one level, scale 0
            zeroBits = half(high, "zero");
            scaleBits = 0;
        } else {
            double low = lowSum / lowCount;
            zeroBits = half(low, "zero");
            scaleBits = half(high - low, "scale");
        }
        boolean zeroScale = HalfFloat.fromHalfBits(scaleBits) == 0.0;
        for (int i = 0; i < count; i++) {
            codes[codeFrom + i * codeStride] = !zeroScale && x[from + i * stride] >= mean ? 1 : 0;
        }
        return pack(scaleBits, zeroBits);
    }

    private static short half(double v, String what) {
        short h = HalfFloat.toHalfBits(v);
        if (Double.isInfinite(HalfFloat.fromHalfBits(h))) {
            throw new IllegalArgumentException("group " + what + " " + v + " overflows fp16: the group's range is too wide");
        }
        return h;
    }

    private static int pack(short scaleBits, short zeroBits) {
        return ((scaleBits & 0xFFFF) << 16) | (zeroBits & 0xFFFF);
    }
}
