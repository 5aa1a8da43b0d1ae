package org.mechspec.oal;

import java.util.Arrays;
import java.util.function.DoubleUnaryOperator;
import org.mechspec.compute.Finite;
import org.mechspec.compute.FloatArrays;

/**
 * CPU twin of {@code src/main/cuda/oal.cu}: grouped-quadratic attention, dense and recurrent, fp64 and fp32.
 * One implementation serves both precisions: the fp32 path rounds every operation's result to float, which gives
 * exactly float arithmetic (a double result of +, −, ×, ÷ on floats rounded to float is the correctly rounded float
 * result). Deterministic: every sum runs in a fixed ascending order.
 */
public final class CpuGroupedQuadraticAttention implements GroupedQuadraticAttentionOps {
    public static final CpuGroupedQuadraticAttention INSTANCE = new CpuGroupedQuadraticAttention();

    private static final DoubleUnaryOperator FP64 = x -> x;
    private static final DoubleUnaryOperator FP32 = x -> (float) x;

    private CpuGroupedQuadraticAttention() {
    }

    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        checkInputs(s, q, k, v, groups, m);
        return dense(s, q, k, v, groups, m, FP64);
    }

    @Override
    public float[] dense(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        checkInputs(s, q, k, v, groups, m);
        return FloatArrays.narrow(dense(s, FloatArrays.widen(q), FloatArrays.widen(k), FloatArrays.widen(v), groups, FloatArrays.widen(m), FP32));
    }

    @Override
    public double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        checkInputs(s, q, k, v, groups, m);
        return recurrent(s, q, k, v, groups, m, FP64);
    }

    @Override
    public float[] recurrent(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        checkInputs(s, q, k, v, groups, m);
        return FloatArrays.narrow(recurrent(s, FloatArrays.widen(q), FloatArrays.widen(k), FloatArrays.widen(v), groups, FloatArrays.widen(m), FP32));
    }

    // ---------------------------------------------------------------- dense

    /** The masked T×T similarity matrix per (batch, head): sim on and below the diagonal, zero above. */
    private static double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m,
                                  DoubleUnaryOperator r) {
        int T = s.seqLen();
        int d = s.headDim();
        int side = s.side();
        double invSqrtD = r.applyAsDouble(1.0 / Math.sqrt(d));
        double[] out = new double[q.length];
        double[] den = new double[s.denominatorElements()];
        double[] sims = new double[T * T];
        double[] qs = new double[d];
        double[] phi = new double[side];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.heads(); h++) {
                int g = s.kvHeadOf(h);
                for (int t = 0; t < T; t++) {
                    int qOff = s.queryOffset(b, t, h);
                    for (int i = 0; i < d; i++) {
                        qs[i] = r.applyAsDouble(q[qOff + i] * invSqrtD);
                    }
                    for (int j = 0; j < T; j++) {
                        sims[t * T + j] = j > t ? 0.0
                                : similarity(qs, k, s.kvOffset(b, j, g), groups, h * d, m, h * side * side, side, phi, r);
                    }
                }
                for (int t = 0; t < T; t++) {
                    double sum = 0.0;
                    for (int j = 0; j < T; j++) {
                        sum = r.applyAsDouble(sum + sims[t * T + j]);
                    }
                    den[(b * T + t) * s.heads() + h] = sum;
                    int oOff = s.queryOffset(b, t, h);
                    for (int c = 0; c < d; c++) {
                        double acc = 0.0;
                        for (int j = 0; j < T; j++) {
                            acc = r.applyAsDouble(acc + r.applyAsDouble(sims[t * T + j] * v[s.kvOffset(b, j, g) + c]));
                        }
                        out[oOff + c] = r.applyAsDouble(acc / sum);
                    }
                }
            }
        }
        NonPositiveDenominatorException.requirePositive(s, den);
        return out;
    }

    /** ε + φ·M·φ with φ = [1, z], z_g = Σ_{i in g} qs_i·k_i (qs = q/√d already scaled). */
    private static double similarity(double[] qs, double[] k, int kOff, int[] groups, int gOff, double[] m, int mOff,
                                     int side, double[] phi, DoubleUnaryOperator r) {
        Arrays.fill(phi, 0.0);
        phi[0] = 1.0;
        for (int i = 0; i < qs.length; i++) {
            int at = 1 + groups[gOff + i];
            phi[at] = r.applyAsDouble(phi[at] + r.applyAsDouble(qs[i] * k[kOff + i]));
        }
        double quad = 0.0;
        for (int a = 0; a < side; a++) {
            double row = 0.0;
            for (int c = 0; c < side; c++) {
                row = r.applyAsDouble(row + r.applyAsDouble(m[mOff + a * side + c] * phi[c]));
            }
            quad = r.applyAsDouble(quad + r.applyAsDouble(phi[a] * row));
        }
        return r.applyAsDouble(r.applyAsDouble(EPSILON) + quad);
    }

    // ------------------------------------------------------------ recurrent

    /**
     * Scans t with the state [features, d + 1] (features 1, k_i, k_i·k_j for i ≤ j; column d is the normalizer's
     * "1"): add token t, then contract with the query's coefficients in ascending feature order.
     */
    private double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m,
                               DoubleUnaryOperator r) {
        int T = s.seqLen();
        int d = s.headDim();
        int cols = d + 1;
        int features = s.stateFeatures();
        double invSqrtD = r.applyAsDouble(1.0 / Math.sqrt(d));
        double[] out = new double[q.length];
        double[] den = new double[s.denominatorElements()];
        double[] state = new double[features * cols];
        double[] feature = new double[features];
        double[] coefficient = new double[features];
        double[] qs = new double[d];
        double[] col = new double[cols];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.heads(); h++) {
                int g = s.kvHeadOf(h);
                Arrays.fill(state, 0.0);
                for (int t = 0; t < T; t++) {
                    int kOff = s.kvOffset(b, t, g);
                    features(k, kOff, d, feature, r);
                    for (int p = 0; p < features; p++) {
                        for (int c = 0; c < d; c++) {
                            state[p * cols + c] = r.applyAsDouble(state[p * cols + c] + r.applyAsDouble(feature[p] * v[kOff + c]));
                        }
                        state[p * cols + d] = r.applyAsDouble(state[p * cols + d] + feature[p]);
                    }
                    int qOff = s.queryOffset(b, t, h);
                    for (int i = 0; i < d; i++) {
                        qs[i] = r.applyAsDouble(q[qOff + i] * invSqrtD);
                    }
                    coefficients(qs, groups, h * d, m, h * s.side() * s.side(), s.side(), coefficient, r);
                    Arrays.fill(col, 0.0);
                    for (int p = 0; p < features; p++) {
                        for (int c = 0; c < cols; c++) {
                            col[c] = r.applyAsDouble(col[c] + r.applyAsDouble(coefficient[p] * state[p * cols + c]));
                        }
                    }
                    den[(b * T + t) * s.heads() + h] = col[d];
                    for (int c = 0; c < d; c++) {
                        out[qOff + c] = r.applyAsDouble(col[c] / col[d]);
                    }
                }
            }
        }
        NonPositiveDenominatorException.requirePositive(s, den);
        return out;
    }

    /** [1, k_0 … k_{d−1}, k_i·k_j for i ≤ j (row by row)]. */
    private static void features(double[] k, int kOff, int d, double[] f, DoubleUnaryOperator r) {
        f[0] = 1.0;
        for (int i = 0; i < d; i++) {
            f[1 + i] = k[kOff + i];
        }
        int p = 1 + d;
        for (int i = 0; i < d; i++) {
            for (int j = i; j < d; j++) {
                f[p++] = r.applyAsDouble(k[kOff + i] * k[kOff + j]);
            }
        }
    }

    /**
     * The query's coefficients on the state's features, so that Σ_p a_p·f_p(k) = sim(q, k):
     * ε + M00 on 1; (M0g + Mg0)·qs_i on k_i; M_gg·qs_i² on k_i²; (M_gh + M_hg)·qs_i·qs_j on k_i·k_j, i &lt; j.
     */
    private void coefficients(double[] qs, int[] groups, int gOff, double[] m, int mOff, int side, double[] a,
                              DoubleUnaryOperator r) {
        int d = qs.length;
        a[0] = r.applyAsDouble(r.applyAsDouble(EPSILON) + m[mOff]);
        for (int i = 0; i < d; i++) {
            int gi = 1 + groups[gOff + i];
            a[1 + i] = r.applyAsDouble(r.applyAsDouble(m[mOff + gi] + m[mOff + gi * side]) * qs[i]);
        }
        int p = 1 + d;
        for (int i = 0; i < d; i++) {
            int gi = 1 + groups[gOff + i];
            for (int j = i; j < d; j++) {
                int gj = 1 + groups[gOff + j];
                // The state keeps each unordered pair k_i·k_j once, so it carries both M_gh and M_hg.
                double c = i == j ? m[mOff + gi * side + gi]
                        : r.applyAsDouble(m[mOff + gi * side + gj] + m[mOff + gj * side + gi]);
                a[p++] = r.applyAsDouble(r.applyAsDouble(c * qs[i]) * qs[j]);
            }
        }
    }

    // --------------------------------------------------------------- checks

    static void checkInputs(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        s.validate(q.length, k.length, v.length, groups, m.length);
        Finite.require("q", q);
        Finite.require("k", k);
        Finite.require("v", v);
        Finite.require("m", m);
    }

    static void checkInputs(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        s.validate(q.length, k.length, v.length, groups, m.length);
        Finite.require("q", q);
        Finite.require("k", k);
        Finite.require("v", v);
        Finite.require("m", m);
    }


}
