package org.mechspec.compute;

import java.util.Arrays;

/**
 * CPU twin of {@code src/main/cuda/oal.cu}: grouped-quadratic attention, dense and recurrent, fp64 and fp32.
 * Deterministic: every sum runs in a fixed ascending order. The fp32 paths compute in float throughout.
 * Not final only so that a mutant test can override {@link #offDiagonalPairWeight()}.
 */
public class CpuLinearAttention implements LinearAttentionOps {
    public static final CpuLinearAttention INSTANCE = new CpuLinearAttention();

    protected CpuLinearAttention() {
    }

    @Override
    public String name() {
        return "cpu";
    }

    /**
     * How often a pair k_i·k_j (i &lt; j) of the recurrent state counts, relative to the symmetric quadratic form:
     * the state keeps each unordered pair once, so it must count twice.
     */
    protected double offDiagonalPairWeight() {
        return 2.0;
    }

    // ---------------------------------------------------------------- dense

    @Override
    public double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        checkInputs(s, q, k, v, groups, m);
        int T = s.seqLen();
        int d = s.headDim();
        int side = s.side();
        double invSqrtD = 1.0 / Math.sqrt(d);
        double[] out = new double[q.length];
        double[] den = new double[s.denominatorElements()];
        double[] sims = new double[T * T];
        double[] qs = new double[d];
        double[] phi = new double[side];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.heads(); h++) {
                int g = s.kvHeadOf(h);
                // The masked T×T matrix: sim below and on the diagonal, zero above.
                for (int t = 0; t < T; t++) {
                    int qOff = s.queryOffset(b, t, h);
                    for (int i = 0; i < d; i++) {
                        qs[i] = q[qOff + i] * invSqrtD;
                    }
                    for (int j = 0; j < T; j++) {
                        sims[t * T + j] = j > t ? 0.0
                                : similarity(qs, k, s.kvOffset(b, j, g), groups, h * d, m, h * side * side, side, phi);
                    }
                }
                for (int t = 0; t < T; t++) {
                    double sum = 0.0;
                    for (int j = 0; j < T; j++) {
                        sum += sims[t * T + j];
                    }
                    den[(b * T + t) * s.heads() + h] = sum;
                    int oOff = s.queryOffset(b, t, h);
                    for (int c = 0; c < d; c++) {
                        double acc = 0.0;
                        for (int j = 0; j < T; j++) {
                            acc += sims[t * T + j] * v[s.kvOffset(b, j, g) + c];
                        }
                        out[oOff + c] = acc / sum;
                    }
                }
            }
        }
        NonPositiveDenominatorException.requirePositive(s, den);
        return out;
    }

    /** ε + φ·M·φ with φ = [1, z], z_g = Σ_{i in g} qs_i·k_i (qs = q/√d already scaled). */
    static double similarity(double[] qs, double[] k, int kOff, int[] groups, int gOff, double[] m, int mOff, int side,
                             double[] phi) {
        Arrays.fill(phi, 0.0);
        phi[0] = 1.0;
        for (int i = 0; i < qs.length; i++) {
            phi[1 + groups[gOff + i]] += qs[i] * k[kOff + i];
        }
        double quad = 0.0;
        for (int a = 0; a < side; a++) {
            double row = 0.0;
            for (int c = 0; c < side; c++) {
                row += m[mOff + a * side + c] * phi[c];
            }
            quad += phi[a] * row;
        }
        return EPSILON + quad;
    }

    @Override
    public float[] dense(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        checkInputs(s, q, k, v, groups, m);
        int T = s.seqLen();
        int d = s.headDim();
        int side = s.side();
        float invSqrtD = (float) (1.0 / Math.sqrt(d));
        float[] out = new float[q.length];
        float[] den = new float[s.denominatorElements()];
        float[] sims = new float[T * T];
        float[] qs = new float[d];
        float[] phi = new float[side];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.heads(); h++) {
                int g = s.kvHeadOf(h);
                for (int t = 0; t < T; t++) {
                    int qOff = s.queryOffset(b, t, h);
                    for (int i = 0; i < d; i++) {
                        qs[i] = q[qOff + i] * invSqrtD;
                    }
                    for (int j = 0; j < T; j++) {
                        sims[t * T + j] = j > t ? 0f
                                : similarity(qs, k, s.kvOffset(b, j, g), groups, h * d, m, h * side * side, side, phi);
                    }
                }
                for (int t = 0; t < T; t++) {
                    float sum = 0f;
                    for (int j = 0; j < T; j++) {
                        sum += sims[t * T + j];
                    }
                    den[(b * T + t) * s.heads() + h] = sum;
                    int oOff = s.queryOffset(b, t, h);
                    for (int c = 0; c < d; c++) {
                        float acc = 0f;
                        for (int j = 0; j < T; j++) {
                            acc += sims[t * T + j] * v[s.kvOffset(b, j, g) + c];
                        }
                        out[oOff + c] = acc / sum;
                    }
                }
            }
        }
        NonPositiveDenominatorException.requirePositive(s, den);
        return out;
    }

    static float similarity(float[] qs, float[] k, int kOff, int[] groups, int gOff, float[] m, int mOff, int side,
                            float[] phi) {
        Arrays.fill(phi, 0f);
        phi[0] = 1f;
        for (int i = 0; i < qs.length; i++) {
            phi[1 + groups[gOff + i]] += qs[i] * k[kOff + i];
        }
        float quad = 0f;
        for (int a = 0; a < side; a++) {
            float row = 0f;
            for (int c = 0; c < side; c++) {
                row += m[mOff + a * side + c] * phi[c];
            }
            quad += phi[a] * row;
        }
        return (float) EPSILON + quad;
    }

    // ------------------------------------------------------------ recurrent

    @Override
    public double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        checkInputs(s, q, k, v, groups, m);
        int T = s.seqLen();
        int d = s.headDim();
        int cols = d + 1; // [v, 1]
        int features = s.stateFeatures();
        double invSqrtD = 1.0 / Math.sqrt(d);
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
                    features(k, kOff, d, feature);
                    for (int p = 0; p < features; p++) {
                        double f = feature[p];
                        for (int c = 0; c < d; c++) {
                            state[p * cols + c] += f * v[kOff + c];
                        }
                        state[p * cols + d] += f;
                    }
                    int qOff = s.queryOffset(b, t, h);
                    for (int i = 0; i < d; i++) {
                        qs[i] = q[qOff + i] * invSqrtD;
                    }
                    coefficients(qs, groups, h * d, m, h * s.side() * s.side(), s.side(), coefficient);
                    Arrays.fill(col, 0.0);
                    for (int p = 0; p < features; p++) {
                        double a = coefficient[p];
                        for (int c = 0; c < cols; c++) {
                            col[c] += a * state[p * cols + c];
                        }
                    }
                    den[(b * T + t) * s.heads() + h] = col[d];
                    for (int c = 0; c < d; c++) {
                        out[qOff + c] = col[c] / col[d];
                    }
                }
            }
        }
        NonPositiveDenominatorException.requirePositive(s, den);
        return out;
    }

    /** [1, k_0 … k_{d−1}, k_i·k_j for i ≤ j (row by row)]. */
    private static void features(double[] k, int kOff, int d, double[] f) {
        f[0] = 1.0;
        for (int i = 0; i < d; i++) {
            f[1 + i] = k[kOff + i];
        }
        int p = 1 + d;
        for (int i = 0; i < d; i++) {
            for (int j = i; j < d; j++) {
                f[p++] = k[kOff + i] * k[kOff + j];
            }
        }
    }

    /**
     * The query's coefficients on the state's features, so that Σ_p a_p·f_p(k) = sim(q, k):
     * ε + M00 on 1; (M0g + Mg0)·qs_i on k_i; M_gg·qs_i² on k_i²; (M_gh + M_hg)·qs_i·qs_j on k_i·k_j, i &lt; j.
     */
    private void coefficients(double[] qs, int[] groups, int gOff, double[] m, int mOff, int side, double[] a) {
        int d = qs.length;
        double pairWeight = offDiagonalPairWeight();
        a[0] = EPSILON + m[mOff];
        for (int i = 0; i < d; i++) {
            int gi = 1 + groups[gOff + i];
            a[1 + i] = (m[mOff + gi] + m[mOff + gi * side]) * qs[i];
        }
        int p = 1 + d;
        for (int i = 0; i < d; i++) {
            int gi = 1 + groups[gOff + i];
            for (int j = i; j < d; j++) {
                int gj = 1 + groups[gOff + j];
                double c = i == j ? m[mOff + gi * side + gi]
                        : pairWeight * 0.5 * (m[mOff + gi * side + gj] + m[mOff + gj * side + gi]);
                a[p++] = c * qs[i] * qs[j];
            }
        }
    }

    @Override
    public float[] recurrent(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        checkInputs(s, q, k, v, groups, m);
        int T = s.seqLen();
        int d = s.headDim();
        int cols = d + 1;
        int features = s.stateFeatures();
        float invSqrtD = (float) (1.0 / Math.sqrt(d));
        float[] out = new float[q.length];
        float[] den = new float[s.denominatorElements()];
        float[] state = new float[features * cols];
        float[] feature = new float[features];
        float[] coefficient = new float[features];
        float[] qs = new float[d];
        float[] col = new float[cols];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.heads(); h++) {
                int g = s.kvHeadOf(h);
                Arrays.fill(state, 0f);
                for (int t = 0; t < T; t++) {
                    int kOff = s.kvOffset(b, t, g);
                    features(k, kOff, d, feature);
                    for (int p = 0; p < features; p++) {
                        float f = feature[p];
                        for (int c = 0; c < d; c++) {
                            state[p * cols + c] += f * v[kOff + c];
                        }
                        state[p * cols + d] += f;
                    }
                    int qOff = s.queryOffset(b, t, h);
                    for (int i = 0; i < d; i++) {
                        qs[i] = q[qOff + i] * invSqrtD;
                    }
                    coefficients(qs, groups, h * d, m, h * s.side() * s.side(), s.side(), coefficient);
                    Arrays.fill(col, 0f);
                    for (int p = 0; p < features; p++) {
                        float a = coefficient[p];
                        for (int c = 0; c < cols; c++) {
                            col[c] += a * state[p * cols + c];
                        }
                    }
                    den[(b * T + t) * s.heads() + h] = col[d];
                    for (int c = 0; c < d; c++) {
                        out[qOff + c] = col[c] / col[d];
                    }
                }
            }
        }
        NonPositiveDenominatorException.requirePositive(s, den);
        return out;
    }

    private static void features(float[] k, int kOff, int d, float[] f) {
        f[0] = 1f;
        for (int i = 0; i < d; i++) {
            f[1 + i] = k[kOff + i];
        }
        int p = 1 + d;
        for (int i = 0; i < d; i++) {
            for (int j = i; j < d; j++) {
                f[p++] = k[kOff + i] * k[kOff + j];
            }
        }
    }

    private void coefficients(float[] qs, int[] groups, int gOff, float[] m, int mOff, int side, float[] a) {
        int d = qs.length;
        float pairWeight = (float) offDiagonalPairWeight();
        a[0] = (float) EPSILON + m[mOff];
        for (int i = 0; i < d; i++) {
            int gi = 1 + groups[gOff + i];
            a[1 + i] = (m[mOff + gi] + m[mOff + gi * side]) * qs[i];
        }
        int p = 1 + d;
        for (int i = 0; i < d; i++) {
            int gi = 1 + groups[gOff + i];
            for (int j = i; j < d; j++) {
                int gj = 1 + groups[gOff + j];
                float c = i == j ? m[mOff + gi * side + gi]
                        : pairWeight * 0.5f * (m[mOff + gi * side + gj] + m[mOff + gj * side + gi]);
                a[p++] = c * qs[i] * qs[j];
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
