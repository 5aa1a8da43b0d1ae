package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The fp64 pairwise oracle and its rounding bound against the formulas written out directly: M = L·Lᵀ and
 * |L|·|L|ᵀ as explicit matrix products, sums term by term. 2 query heads over 1 KV head, d = 2, two groups, so every
 * index (head offset, group slot, KV offset) is exercised; the heads use different groups and factors.
 */
@Tag("oal")
class PairwiseOracleTest {
    private static final double EPS = GroupedQuadraticAttentionOps.EPSILON;
    private static final int T = 2;
    private static final int D = 2;
    private static final int SIDE = 3;
    private static final QuadraticAttentionShape SHAPE = new QuadraticAttentionShape(1, T, 2, 1, D, SIDE - 1);
    // q[t][h][i], k[t][i], v[t][i] flattened in the shape's layout
    private static final double[] Q = {0.7, -1.3, 0.4, 0.9, -0.5, 1.1, 1.6, -0.2};
    private static final double[] K = {1.2, 0.8, -0.6, 1.5};
    private static final double[] V = {0.5, -2.0, 1.5, 0.25};
    private static final int[] GROUPS = {0, 1, 1, 0};
    // lower-triangular factors (row-major, upper entries zero), signs mixed so |L|·|L|ᵀ differs from |L·Lᵀ|
    private static final double[][] L = {
        {1.0, 0, 0, -0.5, 0.8, 0, 0.3, -0.4, 0.6},
        {0.9, 0, 0, 0.7, -1.1, 0, -0.2, 0.5, 1.3}};

    private static double[][] matrix(double[] l) {
        double[][] m = new double[SIDE][SIDE];
        for (int r = 0; r < SIDE; r++) {
            for (int c = 0; c < SIDE; c++) {
                m[r][c] = l[r * SIDE + c];
            }
        }
        return m;
    }

    /** A·Bᵀ, with entries made absolute first when {@code abs}. */
    private static double[][] gram(double[] l, boolean abs) {
        double[][] a = matrix(l);
        double[][] out = new double[SIDE][SIDE];
        for (int x = 0; x < SIDE; x++) {
            for (int y = 0; y < SIDE; y++) {
                for (int r = 0; r < SIDE; r++) {
                    out[x][y] += abs ? Math.abs(a[x][r]) * Math.abs(a[y][r]) : a[x][r] * a[y][r];
                }
            }
        }
        return out;
    }

    /** [1, Σ_{i in g} f(q_i k_i)/√d] for query (t, h) and key j. */
    private static double[] features(int t, int h, int j, boolean abs) {
        double[] phi = {1, 0, 0};
        for (int i = 0; i < D; i++) {
            double p = Q[(t * 2 + h) * D + i] * K[j * D + i] / Math.sqrt(D);
            phi[1 + GROUPS[h * D + i]] += abs ? Math.abs(p) : p;
        }
        return phi;
    }

    private static double form(double[] phi, double[][] m) {
        double sum = 0;
        for (int a = 0; a < SIDE; a++) {
            for (int c = 0; c < SIDE; c++) {
                sum += phi[a] * m[a][c] * phi[c];
            }
        }
        return sum;
    }

    @Test
    void similarityOfOnePairIsEpsilonPlusTheSquaredNormWrittenOut() {
        // d = 2, one group: φ = [1, (1·3 + 2·(−1))/√2] = [1, 1/√2]; Lᵀφ = [2 + 0.5/√2, −1.5/√2]
        double[] l = {2.0, 0, 0.5, -1.5};
        double z = 1 / Math.sqrt(2);
        double want = EPS + Math.pow(2 + 0.5 * z, 2) + Math.pow(-1.5 * z, 2);
        double got = PairwiseOracle.similarity(new double[] {1, 2}, 0, new double[] {3, -1}, 0, new int[] {0, 0}, 0, 2, l, 2);
        assertThat(got).isCloseTo(want, within(1e-14));
    }

    @Test
    void attentionIsTheCausalSimilarityWeightedMeanOfTheValues() {
        double[] out = PairwiseOracle.attention(SHAPE, Q, K, V, GROUPS, L);
        for (int t = 0; t < T; t++) {
            for (int h = 0; h < 2; h++) {
                double[][] m = gram(L[h], false);
                double den = 0;
                double[] num = new double[D];
                for (int j = 0; j <= t; j++) {
                    double s = EPS + form(features(t, h, j, false), m);
                    den += s;
                    for (int c = 0; c < D; c++) {
                        num[c] += s * V[j * D + c];
                    }
                }
                for (int c = 0; c < D; c++) {
                    assertThat(out[(t * 2 + h) * D + c]).as("t %d h %d c %d", t, h, c).isCloseTo(num[c] / den, within(1e-12));
                }
            }
        }
    }

    /** An arbitrary (not symmetric, not PSD) M per head: the minimum over the three causal pairs of each head. */
    @Test
    void minSimilarityFromGramIsTheSmallestCausalQuadraticForm() {
        double[] m = {0.4, -0.3, 0.2, 0.1, 0.5, -0.6, 0.3, 0.2, 0.7,
                      1.2, 0.4, -0.1, -0.5, 0.3, 0.2, 0.6, -0.4, 0.9};
        double want = Double.POSITIVE_INFINITY;
        for (int h = 0; h < 2; h++) {
            double[][] mh = new double[SIDE][SIDE];
            for (int a = 0; a < SIDE; a++) {
                for (int c = 0; c < SIDE; c++) {
                    mh[a][c] = m[h * SIDE * SIDE + a * SIDE + c];
                }
            }
            for (int t = 0; t < T; t++) {
                for (int j = 0; j <= t; j++) {
                    want = Math.min(want, EPS + form(features(t, h, j, false), mh));
                }
            }
        }
        assertThat(PairwiseOracle.minSimilarityFromGram(SHAPE, Q, K, GROUPS, m)).isCloseTo(want, within(1e-14));
    }

    /** One token: the only pair is (0, 0), sim = ε + φᵀMφ with φ = [1, q₀k₀/√2 + q₁k₁/√2] (one group, M = 1s). */
    @Test
    void minSimilarityOfASingleTokenIsItsOwnPair() {
        QuadraticAttentionShape one = new QuadraticAttentionShape(1, 1, 1, 1, 2, 1);
        double z = (0.5 * 2.0 + 1.0 * -3.0) / Math.sqrt(2);
        double want = EPS + (1 + z) * (1 + z);
        double got = PairwiseOracle.minSimilarityFromGram(one, new double[] {0.5, 1.0}, new double[] {2.0, -3.0},
                new int[] {0, 0}, new double[] {1, 1, 1, 1});
        assertThat(got).isCloseTo(want, within(1e-14));
    }

    /**
     * The documented bound, evaluated directly: K = T + F + 3(G+1) + 16 roundings (F = 1 + d + d(d+1)/2),
     * γ = Ku/(1 − Ku), e = γ(Ñ + |o|D̃)/(D − γD̃), bound = e + u(|o| + e). A large u = 1e-3 makes every term of the
     * formula visible at the 1e-12 relative tolerance used.
     */
    @Test
    void errorBoundIsTheDocumentedFormula() {
        double u = 1e-3;
        double[] got = PairwiseOracle.errorBound(SHAPE, Q, K, V, GROUPS, L, u);
        int roundings = T + (1 + D + D * (D + 1) / 2) + 3 * SIDE + 16;
        assertThat(roundings).isEqualTo(33);
        double gamma = roundings * u / (1 - roundings * u);
        for (int t = 0; t < T; t++) {
            for (int h = 0; h < 2; h++) {
                double[][] m = gram(L[h], false);
                double[][] absM = gram(L[h], true);
                double den = 0;
                double denAbs = 0;
                double[] num = new double[D];
                double[] numAbs = new double[D];
                for (int j = 0; j <= t; j++) {
                    double s = EPS + form(features(t, h, j, false), m);
                    double sAbs = EPS + form(features(t, h, j, true), absM);
                    den += s;
                    denAbs += sAbs;
                    for (int c = 0; c < D; c++) {
                        num[c] += s * V[j * D + c];
                        numAbs[c] += sAbs * Math.abs(V[j * D + c]);
                    }
                }
                for (int c = 0; c < D; c++) {
                    double o = Math.abs(num[c] / den);
                    double e = gamma * (numAbs[c] + o * denAbs) / (den - gamma * denAbs);
                    double want = e + u * (o + e);
                    assertThat(got[(t * 2 + h) * D + c]).as("t %d h %d c %d", t, h, c)
                            .isCloseTo(want, within(1e-12 * want));
                }
            }
        }
    }

    /** With no rounding (u = 0) the bound is exactly 0, not the "unbounded" +∞ of a non-positive e. */
    @Test
    void errorBoundIsZeroWithoutRounding() {
        for (double b : PairwiseOracle.errorBound(SHAPE, Q, K, V, GROUPS, L, 0.0)) {
            assertThat(b).isEqualTo(0.0);
        }
    }
}
