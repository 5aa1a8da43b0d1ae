package org.mechspec.kernels;

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
    /** DESIGN §5's test vector for seed 42. */
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

    /** Inputs and expected outputs of the exhaustive fp16 rounding check. */
    public record HalfCases(double[] inputs, double[] expected) {
    }

    /**
     * Every fp16 value (NaNs included), every midpoint between consecutive non-negative and non-positive
     * halves (expected: the neighbour with the even code), and the doubles just either side of each midpoint.
     */
    public static HalfCases halfCases() {
        int n = 65536 + 3 * 2 * 31744;
        double[] in = new double[n];
        double[] want = new double[n];
        int at = 0;
        for (int bits = 0; bits < 65536; bits++) {
            double v = halfValue(bits);
            in[at] = v;
            want[at++] = v;
        }
        for (int sign = 0; sign <= 1; sign++) {
            for (int code = 0; code < 31744; code++) { // pairs (code, code+1) up to (max finite, infinity)
                double lo = halfValue(code | sign << 15);
                double hi = halfValue((code + 1) | sign << 15);
                double mid = hi == Double.POSITIVE_INFINITY || hi == Double.NEGATIVE_INFINITY
                        ? lo + (lo - halfValue((code - 1) | sign << 15)) / 2 // 65520: half an ulp above max
                        : (lo + hi) / 2;
                double even = (code & 1) == 0 ? lo : hi;
                in[at] = mid;
                want[at++] = even;
                in[at] = towardZero(mid);
                want[at++] = lo;
                in[at] = awayFromZero(mid);
                want[at++] = hi;
            }
        }
        return new HalfCases(in, want);
    }

    /** How many outputs differ bit for bit from the definition (NaN matches NaN). */
    public static int halfMismatches(Backend backend) {
        HalfCases c = halfCases();
        double[] got = backend.roundToHalf(c.inputs());
        int bad = 0;
        for (int i = 0; i < got.length; i++) {
            boolean same = Double.isNaN(c.expected()[i]) ? Double.isNaN(got[i])
                    : Double.doubleToLongBits(got[i]) == Double.doubleToLongBits(c.expected()[i]);
            if (!same) {
                bad++;
            }
        }
        return bad;
    }

    /** Decodes fp16 bits by the IEEE definition (independent of HalfFloat). */
    static double halfValue(int bits) {
        int sign = (bits & 0x8000) != 0 ? -1 : 1;
        int e = (bits >> 10) & 0x1F;
        int m = bits & 0x3FF;
        if (e == 31) {
            return m == 0 ? sign * Double.POSITIVE_INFINITY : Double.NaN;
        }
        return e == 0 ? sign * m * Math.pow(2, -24) : sign * (1 + m / 1024.0) * Math.pow(2, e - 15);
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
            return FlashRule.widen(q);
        }

        public double[] kd() {
            return FlashRule.widen(k);
        }

        public double[] vd() {
            return FlashRule.widen(v);
        }

        public double[] biasd() {
            return bias == null ? null : FlashRule.widen(bias);
        }

        /** Length of the longest accumulation chain (for the rule's atol). */
        public int chain() {
            return shape.keyLen() + shape.headDim();
        }
    }

    /** DESIGN-pinned sizes of the kernels protocol (manifest "attention_shapes"). */
    public static AttentionCase attentionCase(long seed, boolean withBias, boolean causal) {
        Rng rng = new Rng(seed);
        AttentionShape s = AttentionShape.of(2, 8, 2, 37, 301, 64, 48, causal);
        float[] q = floats(rng, s.queryElements(), 1.0);
        float[] k = floats(rng, s.keyElements(), 1.0);
        float[] v = floats(rng, s.valueElements(), 1.0);
        float[] bias = withBias ? floats(rng, s.biasElements(), 2.0) : null;
        return new AttentionCase(s, q, k, v, bias);
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
        double[] naive = FlashRule.widen(CpuBackend.INSTANCE.attention(c.shape(), c.q(), c.k(), c.v(), c.bias()));
        double[] out = FlashRule.widen(backend.attention(c.shape(), c.q(), c.k(), c.v(), c.bias()));
        return FlashRule.judge(out, oracle, naive, FlashRule.FP32_UNIT_ROUNDOFF, c.chain());
    }

    public static FlashRule.Verdict attentionFp64(Backend backend, AttentionCase c) {
        double[] oracle = CpuBackend.INSTANCE.attention(c.shape(), c.qd(), c.kd(), c.vd(), c.biasd());
        double[] out = backend.attention(c.shape(), c.qd(), c.kd(), c.vd(), c.biasd());
        return FlashRule.judge(out, oracle, oracle, FlashRule.FP64_UNIT_ROUNDOFF, c.chain());
    }
}
