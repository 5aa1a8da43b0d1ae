package org.mechspec.foldbias;

/**
 * Sizes and constants of one fold-bias problem. The value dimension equals the key dimension d.
 *
 * @param d key / query / value dimension
 * @param n context tokens (keys and values before compaction)
 * @param t compact keys selected before NNLS pruning
 * @param referenceQueries queries the offline fits use
 * @param testQueries queries the metrics are measured on
 * @param querySpread queries are μ + spread·z
 * @param lambda ridge weight of the fold-direction fit
 */
public record FoldBiasConfig(int d, int n, int t, int referenceQueries, int testQueries, double querySpread,
                             double lambda) {

    /** protocols.md (fold-bias), protocol synthetic:fold-bias-v1. */
    public static final FoldBiasConfig PROTOCOL = new FoldBiasConfig(64, 512, 64, 256, 128, 0.5, 1e-3);

    /** Weights at or below this carry no mass: their keys leave the compact set. */
    public static final double PRUNE_WEIGHT = 1e-12;

    public FoldBiasConfig {
        requirePositive("d (head dimension)", d);
        requirePositive("n (context tokens)", n);
        requirePositive("t (compact keys)", t);
        requirePositive("referenceQueries", referenceQueries);
        requirePositive("testQueries", testQueries);
        if (t > n) {
            throw new IllegalArgumentException("t (compact keys) = " + t + " exceeds n (context tokens) = " + n
                    + ": compaction cannot select more keys than there are");
        }
        if (!Double.isFinite(querySpread) || querySpread < 0) {
            throw new IllegalArgumentException("querySpread must be finite and >= 0, got " + querySpread);
        }
        if (!Double.isFinite(lambda) || lambda < 0) {
            throw new IllegalArgumentException("lambda (ridge weight) must be finite and >= 0, got " + lambda);
        }
    }

    /** The attention logit scale 1/√d, the same constant the Backend's AttentionShape.of uses. */
    public double scale() {
        return 1.0 / Math.sqrt(d);
    }

    private static void requirePositive(String name, int v) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + v);
        }
    }
}
