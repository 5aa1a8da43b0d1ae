package org.mechspec.oal;


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
        return GroupedQuadraticAttentionOps.EPSILON + norm;
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
                        min = Math.min(min, GroupedQuadraticAttentionOps.EPSILON + quad);
                    }
                }
            }
        }
        return min;
    }

    /**
     * A forward error bound for each output element of either form (dense or recurrent, any summation order) and of
     * this oracle, computed in a precision of unit roundoff {@code u} from inputs given in fp64 (Higham's γ analysis).
     * Both forms compute o = N/D, N = Σ_j s_j·v_j, D = Σ_j s_j, as sums of the same elementary products
     * M_ab·(q_i k_i)(q_i' k_i')/d·v_j: dense term by term, recurrent feature by feature. Along any such term's path there
     * are at most K = T + F + 3(G+1) + 16 roundings (F = state features ≥ 2d: the sums over d, the G+1 square of M or
     * the F features, the T keys; plus rounding q, k, v, M to the precision, 1/√d, the products and forming M from L),
     * so |N̂ − N| ≤ γ·Ñ and |D̂ − D| ≤ γ·D̃ with γ = K·u/(1 − K·u), Ñ = Σ_j s̃_j·|v_j|, D̃ = Σ_j s̃_j, where
     * s̃ = ε + [1, A]·(|L|·|L|ᵀ)·[1, A]ᵀ, A_g = Σ_{i in g} |q_i·k_i|/√d, bounds the sum of every term's magnitude. Then
     * |ô − o| ≤ e + u·(|o| + e), e = γ·(Ñ + |o|·D̃)/(D − γ·D̃): it grows with the length and with the magnitudes (and the
     * cancellation) of the terms, unlike a fixed tolerance.
     */
    static double[] errorBound(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[][] l,
                               double u) {
        int d = s.headDim();
        int side = s.side();
        int T = s.seqLen();
        int roundings = T + s.stateFeatures() + 3 * side + 16;
        double gamma = roundings * u / (1 - roundings * u);
        double invSqrtD = 1.0 / Math.sqrt(d);
        double[] bound = new double[q.length];
        double[] sims = new double[T];
        double[] magnitudes = new double[T];
        double[] a = new double[side];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.heads(); h++) {
                int g = s.kvHeadOf(h);
                double[] absGram = absoluteGram(l[h], side);
                for (int t = 0; t < s.seqLen(); t++) {
                    int qOff = s.queryOffset(b, t, h);
                    double den = 0.0;
                    double denAbs = 0.0;
                    for (int j = 0; j <= t; j++) {
                        int kOff = s.kvOffset(b, j, g);
                        sims[j] = similarity(q, qOff, k, kOff, groups, h * d, d, l[h], side);
                        java.util.Arrays.fill(a, 0.0);
                        a[0] = 1.0;
                        for (int i = 0; i < d; i++) {
                            a[1 + groups[h * d + i]] += Math.abs(q[qOff + i] * invSqrtD * k[kOff + i]);
                        }
                        double m = GroupedQuadraticAttentionOps.EPSILON;
                        for (int x = 0; x < side; x++) {
                            for (int y = 0; y < side; y++) {
                                m += a[x] * absGram[x * side + y] * a[y];
                            }
                        }
                        magnitudes[j] = m;
                        den += sims[j];
                        denAbs += m;
                    }
                    for (int c = 0; c < d; c++) {
                        double num = 0.0;
                        double numAbs = 0.0;
                        for (int j = 0; j <= t; j++) {
                            double vj = v[s.kvOffset(b, j, g) + c];
                            num += sims[j] * vj;
                            numAbs += magnitudes[j] * Math.abs(vj);
                        }
                        double o = Math.abs(num / den);
                        double e = gamma * (numAbs + o * denAbs) / (den - gamma * denAbs);
                        bound[qOff + c] = e >= 0 ? e + u * (o + e) : Double.POSITIVE_INFINITY;
                    }
                }
            }
        }
        return bound;
    }

    /** |L|·|L|ᵀ, entry by entry at least |M| = |L·Lᵀ|. */
    private static double[] absoluteGram(double[] l, int side) {
        double[] out = new double[side * side];
        for (int x = 0; x < side; x++) {
            for (int y = 0; y < side; y++) {
                double sum = 0.0;
                for (int r = 0; r <= Math.min(x, y); r++) {
                    sum += Math.abs(l[x * side + r]) * Math.abs(l[y * side + r]);
                }
                out[x * side + y] = sum;
            }
        }
        return out;
    }
}
