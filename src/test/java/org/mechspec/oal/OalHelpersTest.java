package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;

/** The OAL helpers against direct computations on small, hand-checkable cases. */
@Tag("oal")
class OalHelpersTest {

    // ------------------------------------------------------------ grouping contributions

    /**
     * q_t,h,i = ±(h+1)(i+1) and k_t,g,i = ±(g+1), signs alternating with t: mean|q| = (h+1)(i+1), mean|k| = g+1 for
     * the KV head g = ⌊h / 2⌋ of query head h (4 query over 2 KV heads), so c_h,i = (h+1)(i+1)(⌊h/2⌋+1) exactly.
     */
    @Test
    void contributionsOfASmallCaseAreTheirClosedFormPerHead() {
        int heads = 4;
        int kvHeads = 2;
        int d = 5;
        int tokens = 6;
        double[] q = new double[tokens * heads * d];
        double[] k = new double[tokens * kvHeads * d];
        for (int t = 0; t < tokens; t++) {
            double sign = t % 2 == 0 ? 1 : -1;
            for (int h = 0; h < heads; h++) {
                for (int i = 0; i < d; i++) {
                    q[(t * heads + h) * d + i] = sign * (h + 1) * (i + 1);
                }
            }
            for (int g = 0; g < kvHeads; g++) {
                for (int i = 0; i < d; i++) {
                    k[(t * kvHeads + g) * d + i] = -sign * (g + 1);
                }
            }
        }
        LayerSamples s = new LayerSamples(2, 3, heads, kvHeads, d, q, k, new double[k.length], new double[q.length]);
        double[] c = Grouping.contributions(s);
        for (int h = 0; h < heads; h++) {
            for (int i = 0; i < d; i++) {
                assertThat(c[h * d + i]).as("head %d dim %d", h, i).isEqualTo((h + 1) * (i + 1) * (h / 2 + 1.0));
            }
        }
    }

    // ------------------------------------------------------------ bootstrap

    /** The p-th percentile by its definition: order statistics found by counting ranks, no sort; linear at p·(n − 1). */
    static double percentileByDefinition(double[] x, double p) {
        double pos = p / 100.0 * (x.length - 1);
        int lo = (int) Math.floor(pos);
        int hi = Math.min(lo + 1, x.length - 1);
        return orderStatistic(x, lo) + (pos - lo) * (orderStatistic(x, hi) - orderStatistic(x, lo));
    }

    /** The r-th smallest value (0-based): the one with fewer than r + 1 values below it and at least r + 1 at or below. */
    static double orderStatistic(double[] x, int r) {
        for (double v : x) {
            int below = 0;
            int atOrBelow = 0;
            for (double w : x) {
                below += w < v ? 1 : 0;
                atOrBelow += w <= v ? 1 : 0;
            }
            if (below <= r && r < atOrBelow) {
                return v;
            }
        }
        throw new IllegalArgumentException("rank " + r + " of " + x.length);
    }

    /** Does {@code got} equal the definition's percentile (both are one interpolation of two order statistics)? */
    static boolean percentileMatches(double[] x, double p, double got) {
        double want = percentileByDefinition(x, p);
        return Math.abs(got - want) <= 4 * 0x1p-53 * Math.max(Math.abs(want), maxAbs(x));
    }

    private static double maxAbs(double[] x) {
        double m = 0;
        for (double v : x) {
            m = Math.max(m, Math.abs(v));
        }
        return m;
    }

    @Test
    void replicateMeansAreMeansOfIndicesDrawnFromTheStream() {
        double[] x = {0.25, -1.5, 3.0, 0.125, -0.75, 2.5, -2.0};
        double[] means = Bootstrap.replicateMeans(x, 5, new Rng(42));
        Rng rng = new Rng(42);
        for (int r = 0; r < 5; r++) {
            double sum = 0;
            for (int i = 0; i < x.length; i++) {
                sum += x[(int) Math.floor(rng.uniform() * x.length)];
            }
            assertThat(means[r]).as("replicate %d", r).isEqualTo(sum / x.length);
        }
    }

    @Test
    void bootstrapIntervalEqualsTheDefinitionOnSmallCases() {
        Rng rng = new Rng(7);
        for (int n = 1; n <= 12; n++) {
            double[] means = rng.normals(n, 0, 1);
            means[n / 2] = means[0]; // a tie
            for (double p : new double[] {0, 2.5, 25, 50, 97.5, 100}) {
                assertThat(percentileMatches(means, p, Bootstrap.percentile(means, p))).as("n %d p %s", n, p).isTrue();
            }
        }
    }

    /** The survivor: the same interpolation on the unsorted replicate means. */
    @Test
    void percentileWithoutItsSortFailsTheDefinition() {
        double[] means = {0.3, -0.2, 0.1, 0.5, -0.4};
        double pos = 97.5 / 100.0 * (means.length - 1);
        int lo = (int) Math.floor(pos);
        double unsorted = means[lo] + (pos - lo) * (means[lo + 1] - means[lo]);
        assertThat(percentileMatches(means, 97.5, Bootstrap.percentile(means, 97.5))).isTrue();
        assertThat(percentileMatches(means, 97.5, unsorted)).isFalse();
    }
}
