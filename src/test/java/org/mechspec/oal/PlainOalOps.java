package org.mechspec.oal;

import org.mechspec.compute.FloatArrays;

/**
 * OAL written plainly from its definition, apart from the CPU twins: for each row, s_j = ε + aᵀ·M·a with a = [1, A_g]
 * and A_g = Σ_{i in g} q_i·k_i/√d, then o = Σ s_j·v_j / Σ s_j over the keys j ≤ t; in fp64 or in float arithmetic.
 * Both forms answer with it. With one fault that real kernels shipped, or none (right but different: the property
 * halves must pass it).
 */
final class PlainOalOps implements GroupedQuadraticAttentionOps {
    enum Fault {
        NONE,
        /** keys in tiles of 32, a partial last tile skipped (a kernel that assumed T a multiple of its tile). */
        PARTIAL_TILE_DROPPED,
        /** q·k summed over at most 64 channels (a kernel tiled for head dims up to 64). */
        CHANNELS_CAPPED_AT_64
    }

    private final Fault fault;

    PlainOalOps(Fault fault) {
        this.fault = fault;
    }

    @Override
    public String name() {
        return "plain-" + fault;
    }

    @Override
    public double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        return attention(s, q, k, v, groups, m, false);
    }

    @Override
    public float[] dense(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        return FloatArrays.narrow(attention(s, FloatArrays.widen(q), FloatArrays.widen(k), FloatArrays.widen(v), groups, FloatArrays.widen(m), true));
    }

    @Override
    public double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        return dense(s, q, k, v, groups, m);
    }

    @Override
    public float[] recurrent(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        return dense(s, q, k, v, groups, m);
    }

    private double[] attention(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m, boolean fp32) {
        int d = s.headDim();
        int side = s.side();
        int T = s.seqLen();
        int channels = fault == Fault.CHANNELS_CAPPED_AT_64 ? Math.min(d, 64) : d;
        int keys = fault == Fault.PARTIAL_TILE_DROPPED && T > 32 ? T - T % 32 : T;
        double invSqrtD = r(1 / Math.sqrt(d), fp32);
        double[] out = new double[q.length];
        double[] a = new double[side];
        double[] num = new double[d];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.heads(); h++) {
                int g = s.kvHeadOf(h);
                int mOff = h * side * side;
                for (int t = 0; t < T; t++) {
                    int qOff = s.queryOffset(b, t, h);
                    java.util.Arrays.fill(num, 0);
                    double den = 0;
                    for (int j = 0; j <= Math.min(t, keys - 1); j++) {
                        int kOff = s.kvOffset(b, j, g);
                        java.util.Arrays.fill(a, 0);
                        a[0] = 1;
                        for (int i = 0; i < channels; i++) {
                            int x = 1 + groups[h * d + i];
                            a[x] = r(a[x] + r(r(q[qOff + i] * invSqrtD, fp32) * k[kOff + i], fp32), fp32);
                        }
                        double sim = r(GroupedQuadraticAttentionOps.EPSILON, fp32);
                        for (int x = 0; x < side; x++) {
                            double row = 0;
                            for (int y = 0; y < side; y++) {
                                row = r(row + r(m[mOff + x * side + y] * a[y], fp32), fp32);
                            }
                            sim = r(sim + r(a[x] * row, fp32), fp32);
                        }
                        den = r(den + sim, fp32);
                        for (int c = 0; c < d; c++) {
                            num[c] = r(num[c] + r(sim * v[kOff + c], fp32), fp32);
                        }
                    }
                    for (int c = 0; c < d; c++) {
                        out[qOff + c] = r(num[c] / den, fp32);
                    }
                }
            }
        }
        return out;
    }

    private static double r(double x, boolean fp32) {
        return fp32 ? (float) x : x;
    }
}
