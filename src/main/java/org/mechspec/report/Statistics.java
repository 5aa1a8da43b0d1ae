package org.mechspec.report;

import java.math.BigDecimal;
import java.math.MathContext;
import java.util.List;
import org.apache.commons.statistics.distribution.TDistribution;

/**
 * Aggregates over seeds. Sums are exact (BigDecimal) and rounded once, like Python's statistics module,
 * so identical per-seed values give a standard deviation of exactly 0 and the seed files' aggregate blocks
 * are reproduced to the last bits.
 */
public final class Statistics {
    private static final MathContext MC = MathContext.DECIMAL128;

    private Statistics() {
    }

    /** The arithmetic mean. */
    public static double mean(List<Double> xs) {
        requireNonEmpty(xs);
        return exactMean(xs).doubleValue();
    }

    /** Sample standard deviation (n − 1); 0 for a single value. */
    public static double sampleStd(List<Double> xs) {
        requireNonEmpty(xs);
        if (xs.size() < 2) {
            return 0.0;
        }
        // (n·Σx² − (Σx)²) / (n(n−1)), exact until the one division: equal values give exactly 0.
        BigDecimal sum = BigDecimal.ZERO;
        BigDecimal sumSq = BigDecimal.ZERO;
        for (double x : xs) {
            BigDecimal b = new BigDecimal(x);
            sum = sum.add(b);
            sumSq = sumSq.add(b.multiply(b));
        }
        BigDecimal n = BigDecimal.valueOf(xs.size());
        BigDecimal numerator = n.multiply(sumSq).subtract(sum.multiply(sum));
        BigDecimal var = numerator.divide(n.multiply(BigDecimal.valueOf(xs.size() - 1L)), MC);
        return var.sqrt(MC).doubleValue();
    }

    /** Normal-approximation half-width 1.96·s/√n, as in the seed files. */
    public static double ci95(List<Double> xs) {
        return 1.96 * sampleStd(xs) / Math.sqrt(xs.size());
    }

    /** Student-t half-width t(0.975, n−1)·s/√n; 0 when n &lt; 2. */
    public static double ci95t(List<Double> xs) {
        if (xs.size() < 2) {
            return 0.0;
        }
        double t = TDistribution.of(xs.size() - 1.0).inverseCumulativeProbability(0.975);
        return t * sampleStd(xs) / Math.sqrt(xs.size());
    }

    /** The smallest value. */
    public static double min(List<Double> xs) {
        requireNonEmpty(xs);
        return xs.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
    }

    /** The largest value. */
    public static double max(List<Double> xs) {
        requireNonEmpty(xs);
        return xs.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
    }

    /**
     * A statistic by its template name: mean, std / sample_std, n, ci95, ci95_t, min, max.
     *
     * @throws IllegalArgumentException for any other name
     */
    public static double byName(String stat, List<Double> xs) {
        switch (stat) {
            case "mean":
                return mean(xs);
            case "std": // the sample standard deviation (n - 1)
                return sampleStd(xs);
            case "n":
                return xs.size();
            case "ci95":
                return ci95(xs);
            case "ci95_t":
                return ci95t(xs);
            case "min":
                return min(xs);
            case "max":
                return max(xs);
            default:
                throw new IllegalArgumentException("unknown statistic '" + stat + "'");
        }
    }

    private static BigDecimal exactMean(List<Double> xs) {
        BigDecimal sum = BigDecimal.ZERO;
        for (double x : xs) {
            if (!Double.isFinite(x)) {
                throw new IllegalArgumentException("cannot aggregate a non-finite value: " + x);
            }
            sum = sum.add(new BigDecimal(x));
        }
        return sum.divide(BigDecimal.valueOf(xs.size()), MC);
    }

    private static void requireNonEmpty(List<Double> xs) {
        if (xs.isEmpty()) {
            throw new IllegalArgumentException("no values to aggregate");
        }
    }
}
