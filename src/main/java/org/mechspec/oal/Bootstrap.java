package org.mechspec.oal;

import java.util.Arrays;
import org.mechspec.compute.Rng;

/**
 * Percentile bootstrap of a mean: each replicate draws n indices ⌊u·n⌋ with replacement from the protocol's stream
 * and takes the mean; percentiles interpolate linearly between order statistics at p·(R − 1).
 */
final class Bootstrap {
    private Bootstrap() {
    }

    static double[] replicateMeans(double[] x, int replicates, Rng rng) {
        double[] means = new double[replicates];
        for (int r = 0; r < replicates; r++) {
            double sum = 0.0;
            for (int i = 0; i < x.length; i++) {
                sum += x[(int) (rng.uniform() * x.length)];
            }
            means[r] = sum / x.length;
        }
        return means;
    }

    /** The p-th percentile (0..100) of {@code values}. */
    static double percentile(double[] values, double p) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        double pos = p / 100.0 * (sorted.length - 1);
        int lo = (int) Math.floor(pos);
        int hi = Math.min(lo + 1, sorted.length - 1);
        return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
    }
}
