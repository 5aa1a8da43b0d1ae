package org.mechspec.model;

import java.util.Map;

/**
 * The predicates of the model's contracts, shared by the contract tests and their mutant tests.
 */
final class ModelChecks {
    private ModelChecks() {
    }

    /** Every tensor's finite-difference relative error is at most {@code tolerance} (and there is one). */
    static boolean gradientsAgree(Map<String, Double> relativeErrors, double tolerance) {
        return !relativeErrors.isEmpty()
                && relativeErrors.values().stream().allMatch(e -> Double.isFinite(e) && e <= tolerance);
    }

    /** Same precision, shape and bit pattern. */
    static boolean bitIdentical(Tensor a, Tensor b) {
        return a.bitEquals(b);
    }

    /** max|a − b| / max(max|b|, tiny). */
    static double maxRelativeDifference(Tensor a, Tensor b) {
        if (a.size() != b.size()) {
            return Double.POSITIVE_INFINITY;
        }
        double diff = 0.0;
        double scale = 0.0;
        for (int i = 0; i < a.size(); i++) {
            diff = Math.max(diff, Math.abs(a.get(i) - b.get(i)));
            scale = Math.max(scale, Math.abs(b.get(i)));
        }
        return diff / Math.max(scale, Double.MIN_NORMAL);
    }

    /** Two forwards agree to a relative tolerance. */
    static boolean forwardsAgree(Tensor a, Tensor b, double tolerance) {
        return maxRelativeDifference(a, b) <= tolerance;
    }

    /** Training on one batch brought the loss below {@code fraction} of where it started. */
    static boolean lossFell(double initialLoss, double finalLoss, double fraction) {
        return Double.isFinite(finalLoss) && finalLoss < fraction * initialLoss;
    }

    /** The fixture's bytes and its evaluated perplexity are those its training record states. */
    static boolean fixtureMatchesRecord(String actualSha256, String recordedSha256, double actualPerplexity,
                                               double recordedPerplexity, double relativeTolerance) {
        return actualSha256.equalsIgnoreCase(recordedSha256)
                && Math.abs(actualPerplexity - recordedPerplexity) <= relativeTolerance * Math.abs(recordedPerplexity);
    }
}
