package org.mechspec.foldbias;

import java.util.Arrays;
import org.mechspec.compute.Backend;
import org.mechspec.compute.Rng;

/**
 * compaction_output_fidelity: the deployed cache's answers on the test queries, against the full uncompressed n-key
 * attention, are at least as close as those of the same mechanism built on any of several arbitrary key sets of the
 * same size (uniformly random t-subsets): the selection, not the value fit alone, is what makes the cache faithful.
 */
final class FidelityCheck {
    /** Arbitrary t-subsets per seeded run. */
    static final int ARBITRARY_SELECTIONS = 8;

    private FidelityCheck() {
    }

    /**
     * @param compactionError mean over test queries of ‖o(K_h, C_v') − o_full‖₂
     * @param arbitraryError the smallest such error over the arbitrary selections (+∞ if none could be built)
     */
    record Result(double compactionError, double arbitraryError) {
        boolean holds() {
            return compactionError <= arbitraryError;
        }
    }

    /** Mean over test queries of ‖deployed − o_full‖₂, o_full = softmax(q·Kᵀ/√d)·V over all n keys. */
    static double outputError(FoldBiasInputs in, double[] deployed) {
        FoldBiasConfig c = in.config();
        double[] full = Definitions.fullAttention(in, in.testQueries(), c.testQueries());
        return Definitions.meanRowDistance(deployed, full, c.testQueries(), c.d());
    }

    /**
     * The smallest output error of the mechanism built on {@code count} arbitrary key sets: each the first t of a
     * Fisher–Yates permutation of the n keys (rng.md) from {@code rng}, in index order. A set whose keys carry no
     * attention mass at all cannot be compacted (the mechanism refuses it): it counts as +∞.
     */
    static double arbitrarySelectionError(Backend backend, FoldBiasInputs in, Rng rng, int count) {
        FoldBiasConfig c = in.config();
        double best = Double.POSITIVE_INFINITY;
        for (int r = 0; r < count; r++) {
            int[] subset = Arrays.copyOf(rng.permutation(c.n()), c.t());
            Arrays.sort(subset);
            KeySelector fixed = (weights, queries, keys, t) -> subset.clone();
            try {
                FoldBiasRun run = new FoldBias(backend, fixed, OutputBound::tv).run(in);
                best = Math.min(best, outputError(in, run.online().deployedOutputs()));
            } catch (ArithmeticException e) {
                if (!String.valueOf(e.getMessage()).contains("no key carries mass")) {
                    throw e;
                }
            }
        }
        return best;
    }
}
