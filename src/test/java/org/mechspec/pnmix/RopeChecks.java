package org.mechspec.pnmix;

import org.mechspec.compute.HalfFloat;

/**
 * RoPE against its definition (protocols.md, pn-mix), written apart from {@link PairLayoutRope} and {@link PairLayout}: pair i of a head
 * at position m is the complex number x_a + i·x_b times e^{i·m·ω_i}, ω_i = θ^(−2i/d) (here 1/θ^(2i/d), so the two
 * computations round differently). Checked: the rotated vectors themselves (exact angles, which norm invariance
 * cannot see), and that q_m·k_n equals the closed form Σ_i Re(q_i·conj(k_i)·e^{i(m−n)ω_i}) of the pre-RoPE pairs,
 * a function of m − n alone (the relative-position property).
 *
 * <p>Bounds, u = 2^−53 (first order). Both take ω_i from the same fl(2i/d), exact for the pinned d = 32; pow is
 * within 1 ulp, the reciprocal and the product p·ω_i ½ ulp each, so the two angles differ by ≤ 7u·p·ω_i; cos and
 * sin (1 ulp) and the rotation's products and sum add ≤ 5u·‖pair‖ per computation. A rotated element is thus
 * within (10 + 7p·ω_i)u·‖pair‖ ≤ 16u·(1 + p·ω_i)·‖pair‖ of the definition. Against exact arithmetic each rotation
 * and the closed form's angle (m − n)·ω_i are within 8u(1 + p·ω_i) of their pair's norm, and the d-term dot plus
 * the d/2-term closed sum within 2d·u·Σ‖q_i‖‖k_i‖ (Cauchy–Schwarz per pair), so q_m·k_n is within
 * u·Σ_i ‖q_i‖‖k_i‖·(16·(3 + (m + n + |m − n|)·ω_i) + 4d) of the closed form: twice the sum of those terms.
 */
public final class RopeChecks {
    static final double U = 0x1.0p-53;

    private RopeChecks() {
    }

    /** Largest deviation and largest deviation over its bound (holds iff {@code maxOverBound <= 1}). */
    public record Deviation(double maxError, double maxOverBound) {
        public boolean holds() {
            return maxOverBound <= 1.0;
        }

        Deviation max(double error, double bound) {
            double over = error == 0 ? 0 : error / bound; // a zero pair has bound 0 and must be met exactly
            return new Deviation(Math.max(maxError, error), Math.max(maxOverBound, over));
        }
    }

    /** ω_i by the definition, computed as 1/θ^(2i/d). */
    static double omega(double theta, int i, int d) {
        return 1.0 / StrictMath.pow(theta, 2.0 * i / d);
    }

    /** Channel a (first) or b (second) of pair i: adjacent (2i, 2i+1), half split (i, i + d/2). */
    static int channel(PairLayout layout, int i, int d, boolean second) {
        boolean adjacent = layout == PairLayout.ADJACENT;
        return adjacent ? 2 * i + (second ? 1 : 0) : i + (second ? d / 2 : 0);
    }

    /**
     * {@code rope} against {@code pre} rotated by the definition, every token t at position t, {@code heads} head
     * vectors of {@code d} per row.
     */
    public static Deviation rotation(double[] pre, double[] rope, int tokens, int heads, int d, double theta, PairLayout layout) {
        return rotation(pre, rope, tokens, heads, d, theta, layout, 0);
    }

    /** The same with row t at position {@code firstPosition} + t. */
    public static Deviation rotation(double[] pre, double[] rope, int tokens, int heads, int d, double theta, PairLayout layout,
                                     int firstPosition) {
        Deviation dev = new Deviation(0, 0);
        int width = heads * d;
        for (int i = 0; i < d / 2; i++) {
            double w = omega(theta, i, d);
            int a = channel(layout, i, d, false);
            int b = channel(layout, i, d, true);
            for (int t = 0; t < tokens; t++) {
                int pos = firstPosition + t;
                double c = StrictMath.cos(pos * w);
                double s = StrictMath.sin(pos * w);
                for (int h = 0; h < heads; h++) {
                    int base = t * width + h * d;
                    double x = pre[base + a];
                    double y = pre[base + b];
                    double bound = 16 * U * (1 + pos * w) * StrictMath.hypot(x, y);
                    // (x + iy)(c + is) = (xc − ys) + i(xs + yc)
                    dev = dev.max(Math.abs(rope[base + a] - (x * c - y * s)), bound);
                    dev = dev.max(Math.abs(rope[base + b] - (x * s + y * c)), bound);
                }
            }
        }
        return dev;
    }

    /** Both rotations of a run's truth: queries and keys. */
    public static Deviation rotation(Projections p, double theta, PairLayout layout) {
        Deviation q = rotation(p.qPreRope(), p.qRope(), p.tokens(), p.queryHeads(), p.headDim(), theta, layout);
        Deviation k = rotation(p.kPreRope(), p.kRope(), p.tokens(), p.kvHeads(), p.headDim(), theta, layout);
        return new Deviation(Math.max(q.maxError(), k.maxError()), Math.max(q.maxOverBound(), k.maxOverBound()));
    }

    /** Elements of the fp16 truth q and k that are not the fp16 rounding of the rotated fp64 vectors. */
    public static long fp16TruthMismatches(Projections p) {
        return halfMismatches(p.qRope(), p.q()) + halfMismatches(p.kRope(), p.k());
    }

    private static long halfMismatches(double[] wide, double[] half) {
        long bad = Math.abs(wide.length - half.length);
        for (int i = 0; i < Math.min(wide.length, half.length); i++) {
            bad += Double.doubleToRawLongBits(HalfFloat.roundToHalf(wide[i])) == Double.doubleToRawLongBits(half[i]) ? 0 : 1;
        }
        return bad;
    }

    /**
     * For every query position m, key position n ≤ m and query head (with its KV head): the rotated fp64 dot
     * q_m·k_n against the closed form of the pre-RoPE pairs at distance m − n.
     */
    public static Deviation relativePosition(Projections p, double theta, PairLayout layout) {
        int d = p.headDim();
        int half = d / 2;
        int n = p.tokens();
        double[] w = new double[half];
        double[][] cos = new double[n][half];
        double[][] sin = new double[n][half];
        for (int i = 0; i < half; i++) {
            w[i] = omega(theta, i, d);
            for (int delta = 0; delta < n; delta++) {
                cos[delta][i] = StrictMath.cos(delta * w[i]);
                sin[delta][i] = StrictMath.sin(delta * w[i]);
            }
        }
        double[] qNorm = pairNorms(p.qPreRope(), n * p.queryHeads(), d, layout);
        double[] kNorm = pairNorms(p.kPreRope(), n * p.kvHeads(), d, layout);
        int group = p.queryHeads() / p.kvHeads();
        Deviation dev = new Deviation(0, 0);
        for (int m = 0; m < n; m++) {
            for (int qh = 0; qh < p.queryHeads(); qh++) {
                int qBase = m * p.qWidth() + qh * d;
                for (int k = 0; k <= m; k++) {
                    int kBase = k * p.kvWidth() + (qh / group) * d;
                    double dot = 0;
                    for (int c = 0; c < d; c++) {
                        dot += p.qRope()[qBase + c] * p.kRope()[kBase + c];
                    }
                    double closed = 0;
                    double bound = 0;
                    for (int i = 0; i < half; i++) {
                        closed += pairTerm(p.qPreRope(), qBase, p.kPreRope(), kBase, i, d, layout, cos[m - k][i], sin[m - k][i]);
                        bound += qNorm[qBase / 2 + i] * kNorm[kBase / 2 + i] * (16 * (3 + (m + k + (m - k)) * w[i]) + 4 * d);
                    }
                    dev = dev.max(Math.abs(dot - closed), U * bound);
                }
            }
        }
        return dev;
    }

    /** Re((a0 + i·a1)(b0 − i·b1)·(cos + i·sin)) for pair i of head vectors a (at aAt) and b (at bAt). */
    private static double pairTerm(double[] a, int aAt, double[] b, int bAt, int i, int d, PairLayout layout, double cos, double sin) {
        double a0 = a[aAt + channel(layout, i, d, false)];
        double a1 = a[aAt + channel(layout, i, d, true)];
        double b0 = b[bAt + channel(layout, i, d, false)];
        double b1 = b[bAt + channel(layout, i, d, true)];
        return (a0 * b0 + a1 * b1) * cos - (a1 * b0 - a0 * b1) * sin;
    }

    /**
     * One head vector pair: {@code aRope}·{@code bRope} (a rotated at position m, b at n) against the closed form of
     * the pre-RoPE {@code a}, {@code b} at distance m − n.
     */
    public static Deviation dot(double[] a, double[] aRope, double[] b, double[] bRope, int m, int n, double theta, PairLayout layout) {
        int d = a.length;
        double dot = 0;
        for (int c = 0; c < d; c++) {
            dot += aRope[c] * bRope[c];
        }
        double closed = 0;
        double bound = 0;
        for (int i = 0; i < d / 2; i++) {
            double w = omega(theta, i, d);
            closed += pairTerm(a, 0, b, 0, i, d, layout, StrictMath.cos((double) (m - n) * w), StrictMath.sin((double) (m - n) * w));
            double na = StrictMath.hypot(a[channel(layout, i, d, false)], a[channel(layout, i, d, true)]);
            double nb = StrictMath.hypot(b[channel(layout, i, d, false)], b[channel(layout, i, d, true)]);
            bound += na * nb * (16 * (3 + ((double) m + n + Math.abs((double) m - n)) * w) + 4 * d);
        }
        return new Deviation(0, 0).max(Math.abs(dot - closed), U * bound);
    }

    /** ‖pair i‖ of each of {@code vectors} consecutive head vectors, at index vector·d/2 + i. */
    private static double[] pairNorms(double[] x, int vectors, int d, PairLayout layout) {
        double[] out = new double[vectors * d / 2];
        for (int v = 0; v < vectors; v++) {
            for (int i = 0; i < d / 2; i++) {
                out[v * d / 2 + i] = StrictMath.hypot(x[v * d + channel(layout, i, d, false)], x[v * d + channel(layout, i, d, true)]);
            }
        }
        return out;
    }
}
