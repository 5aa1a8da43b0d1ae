package org.mechspec.kernels;

import org.mechspec.compute.FloatArrays;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.Backend;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.Rng;
import org.mechspec.spec.FlashRule;

/**
 * The platform kernels' checks as plain predicates, shared by the contracts and their mutant tests.
 * The fp16 reference is the definition itself (consecutive halves, midpoints, ties to the even code),
 * independent of how {@code HalfFloat} computes it.
 */
public final class KernelChecks {
    /** rng.md's test vector for seed 42. */
    public static final long SEED42_FIRST_NEXT = Long.parseUnsignedLong("13679457532755275413");
    public static final double[] SEED42_FIRST_NORMALS = {0.4147197504315306, 0.6526812221519429, -0.8918862136277563, 1.3268335628141066};

    private KernelChecks() {
    }

    public static boolean rngMatchesTestVector(Rng fresh42, Rng fresh42Again) {
        if (fresh42.next() != SEED42_FIRST_NEXT) {
            return false;
        }
        for (double expected : SEED42_FIRST_NORMALS) {
            if (Double.doubleToLongBits(fresh42Again.normal()) != Double.doubleToLongBits(expected)) {
                return false;
            }
        }
        return true;
    }

    /** A 16-bit float format, decoded by its IEEE-style definition (independent of HalfFloat). */
    public enum Format {
        FP16(0x7C00) {
            @Override
            double decode(int bits) {
                double sign = (bits & 0x8000) != 0 ? -1.0 : 1.0; // a double: 0x8000 decodes to -0.0
                int e = (bits >> 10) & 0x1F;
                int m = bits & 0x3FF;
                if (e == 31) {
                    return m == 0 ? sign * Double.POSITIVE_INFINITY : Double.NaN;
                }
                return e == 0 ? sign * m * Math.pow(2, -24) : sign * (1 + m / 1024.0) * Math.pow(2, e - 15);
            }
        },
        BF16(0x7F80) {
            @Override
            double decode(int bits) {
                return Float.intBitsToFloat(bits << 16); // bf16 is the top half of a float
            }
        };

        /** The code of +infinity: codes below it are the finite non-negative values. */
        final int infinityCode;

        Format(int infinityCode) {
            this.infinityCode = infinityCode;
        }

        abstract double decode(int bits);
    }

    /** Inputs and expected outputs of an exhaustive rounding check. */
    public record RoundingCases(double[] inputs, double[] expected) {
    }

    /**
     * Every code of the format (NaNs included), every midpoint between consecutive values of one sign
     * (expected: the neighbour with the even code; above the largest finite value that neighbour is
     * infinity), and the doubles just either side of each midpoint.
     */
    public static RoundingCases roundingCases(Format f) {
        int n = 65536 + 3 * 2 * f.infinityCode;
        double[] in = new double[n];
        double[] want = new double[n];
        int at = 0;
        for (int bits = 0; bits < 65536; bits++) {
            double v = f.decode(bits);
            in[at] = v;
            want[at++] = v;
        }
        for (int sign = 0; sign <= 1; sign++) {
            for (int code = 0; code < f.infinityCode; code++) {
                double lo = f.decode(code | sign << 15);
                double hi = f.decode((code + 1) | sign << 15);
                double mid = Double.isInfinite(hi) ? lo + (lo - f.decode((code - 1) | sign << 15)) / 2 : (lo + hi) / 2;
                in[at] = mid;
                want[at++] = (code & 1) == 0 ? lo : hi;
                in[at] = towardZero(mid);
                want[at++] = lo;
                in[at] = awayFromZero(mid);
                want[at++] = hi;
            }
        }
        return new RoundingCases(in, want);
    }

    /** How many of the backend's fp16 roundings differ bit for bit from the definition. */
    public static int halfMismatches(Backend backend) {
        RoundingCases c = roundingCases(Format.FP16);
        return mismatches(backend.roundToHalf(c.inputs()), c.expected());
    }

    /** How many of the backend's bf16 roundings differ bit for bit from the definition. */
    public static int bfloat16Mismatches(Backend backend) {
        RoundingCases c = roundingCases(Format.BF16);
        return mismatches(backend.roundToBfloat16(c.inputs()), c.expected());
    }

    private static int mismatches(double[] got, double[] expected) {
        int bad = 0;
        for (int i = 0; i < got.length; i++) {
            boolean same = Double.isNaN(expected[i]) ? Double.isNaN(got[i])
                    : Double.doubleToLongBits(got[i]) == Double.doubleToLongBits(expected[i]);
            if (!same) {
                bad++;
            }
        }
        return bad;
    }

    private static double towardZero(double x) {
        return x > 0 ? Math.nextDown(x) : x < 0 ? Math.nextUp(x) : x;
    }

    private static double awayFromZero(double x) {
        return x > 0 ? Math.nextUp(x) : x < 0 ? Math.nextDown(x) : Math.nextUp(x);
    }

    /** One random attention problem per seed, fresh inputs from the pinned stream. */
    public record AttentionCase(AttentionShape shape, float[] q, float[] k, float[] v, float[] bias) {
        public double[] qd() {
            return FloatArrays.widen(q);
        }

        public double[] kd() {
            return FloatArrays.widen(k);
        }

        public double[] vd() {
            return FloatArrays.widen(v);
        }

        public double[] biasd() {
            return bias == null ? null : FloatArrays.widen(bias);
        }

        /** Length of the longest accumulation chain (for the rule's atol). */
        public int chain() {
            return shape.keyLen() + shape.headDim();
        }
    }

    /** protocol-pinned sizes of the kernels protocol (manifest "attention_shapes"). */
    public static AttentionCase attentionCase(long seed, boolean withBias, boolean causal) {
        Rng rng = new Rng(seed);
        AttentionShape s = AttentionShape.of(2, 8, 2, 37, 301, 64, 48, causal);
        float[] q = floats(rng, s.queryElements(), 1.0);
        float[] k = floats(rng, s.keyElements(), 1.0);
        float[] v = floats(rng, s.valueElements(), 1.0);
        float[] bias = withBias ? floats(rng, s.biasElements(), 2.0) : null;
        return new AttentionCase(s, q, k, v, bias);
    }

    /**
     * 7001 keys: more than the fp64 kernel's former one-row score buffer held in 48 KiB (6016); the tiled online
     * softmax crosses 55 tiles of 128 keys here, the last one partial.
     */
    public static AttentionCase longKeysCase(long seed, boolean causal) {
        Rng rng = new Rng(seed);
        AttentionShape s = AttentionShape.of(1, 4, 2, 3, 7001, 32, 16, causal);
        return new AttentionCase(s, floats(rng, s.queryElements(), 1.0), floats(rng, s.keyElements(), 1.0),
                floats(rng, s.valueElements(), 1.0), floats(rng, s.biasElements(), 2.0));
    }

    private static float[] floats(Rng rng, long n, double std) {
        float[] out = new float[(int) n];
        for (int i = 0; i < out.length; i++) {
            out[i] = (float) (std * rng.normal());
        }
        return out;
    }

    public static FlashRule.Verdict attentionFp32(Backend backend, AttentionCase c) {
        double[] oracle = CpuBackend.INSTANCE.attention(c.shape(), c.qd(), c.kd(), c.vd(), c.biasd());
        double[] naive = FloatArrays.widen(CpuBackend.INSTANCE.attention(c.shape(), c.q(), c.k(), c.v(), c.bias()));
        double[] out = FloatArrays.widen(backend.attention(c.shape(), c.q(), c.k(), c.v(), c.bias()));
        return FlashRule.judge(out, oracle, naive, FlashRule.FP32_UNIT_ROUNDOFF, c.chain());
    }

    public static FlashRule.Verdict attentionFp64(Backend backend, AttentionCase c) {
        double[] oracle = CpuBackend.INSTANCE.attention(c.shape(), c.qd(), c.kd(), c.vd(), c.biasd());
        double[] out = backend.attention(c.shape(), c.qd(), c.kd(), c.vd(), c.biasd());
        return FlashRule.judge(out, oracle, oracle, FlashRule.FP64_UNIT_ROUNDOFF, c.chain());
    }
}
