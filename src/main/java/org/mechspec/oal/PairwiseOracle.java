package org.mechspec.oal;

import org.mechspec.compute.LinearAttentionOps;
import org.mechspec.compute.QuadraticAttentionShape;

/**
 * The O(T²) pairwise oracle of grouped-quadratic attention, fp64, written from the factor L rather than M:
 * sim(q, k) = ε + ‖Lᵀ·[1, z]‖², one (query, key) pair at a time, then the causal weighted mean of the values.
 */
final class PairwiseOracle {
    private PairwiseOracle() {
    }

    /** sim(q_t, k_j) for one pair; {@code qOff}/{@code kOff} index the full arrays. */
    static double similarity(double[] q, int qOff, double[] k, int kOff, int[] groups, int gOff, int headDim,
                             double[] l, int side) {
        double[] phi = new double[side];
        phi[0] = 1.0;
        double invSqrtD = 1.0 / Math.sqrt(headDim);
        for (int i = 0; i < headDim; i++) {
            phi[1 + groups[gOff + i]] += (q[qOff + i] * invSqrtD) * k[kOff + i];
        }
        double norm = 0.0;
        for (int c = 0; c < side; c++) {
            double u = 0.0; // (Lᵀφ)_c = Σ_r L_rc·φ_r
            for (int r = c; r < side; r++) {
                u += l[r * side + c] * phi[r];
            }
            norm += u * u;
        }
        return LinearAttentionOps.EPSILON + norm;
    }

    static double[] attention(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[][] l) {
        int d = s.headDim();
        double[] out = new double[q.length];
        double[] sims = new double[s.seqLen()];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.heads(); h++) {
                int g = s.kvHeadOf(h);
                for (int t = 0; t < s.seqLen(); t++) {
                    int qOff = s.queryOffset(b, t, h);
                    double den = 0.0;
                    for (int j = 0; j <= t; j++) {
                        sims[j] = similarity(q, qOff, k, s.kvOffset(b, j, g), groups, h * d, d, l[h], s.side());
                        den += sims[j];
                    }
                    for (int c = 0; c < d; c++) {
                        double acc = 0.0;
                        for (int j = 0; j <= t; j++) {
                            acc += sims[j] * v[s.kvOffset(b, j, g) + c];
                        }
                        out[qOff + c] = acc / den;
                    }
                }
            }
        }
        return out;
    }

    /** The smallest sim(q_t, k_j), j ≤ t, over every head and block, from M (as the kernels compute it). */
    static double minSimilarityFromGram(QuadraticAttentionShape s, double[] q, double[] k, int[] groups, double[] m) {
        int d = s.headDim();
        int side = s.side();
        double invSqrtD = 1.0 / Math.sqrt(d);
        double min = Double.POSITIVE_INFINITY;
        double[] phi = new double[side];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.heads(); h++) {
                int g = s.kvHeadOf(h);
                for (int t = 0; t < s.seqLen(); t++) {
                    int qOff = s.queryOffset(b, t, h);
                    for (int j = 0; j <= t; j++) {
                        int kOff = s.kvOffset(b, j, g);
                        java.util.Arrays.fill(phi, 0.0);
                        phi[0] = 1.0;
                        for (int i = 0; i < d; i++) {
                            phi[1 + groups[h * d + i]] += (q[qOff + i] * invSqrtD) * k[kOff + i];
                        }
                        double quad = 0.0;
                        for (int a = 0; a < side; a++) {
                            for (int c = 0; c < side; c++) {
                                quad += phi[a] * m[h * side * side + a * side + c] * phi[c];
                            }
                        }
                        min = Math.min(min, LinearAttentionOps.EPSILON + quad);
                    }
                }
            }
        }
        return min;
    }
}
