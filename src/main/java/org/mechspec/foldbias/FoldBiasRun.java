package org.mechspec.foldbias;

import java.util.List;

/**
 * Everything one fold-bias run produced, for the metrics and checks to read: the compaction, the fold and value
 * refit, freezing and online use (the mechanism), and the evaluation paths the metrics compare with.
 */
public record FoldBiasRun(FoldBiasConfig config, Compaction compaction, Fold fold, Online online,
                          Evaluation evaluation) {

    /** Compact keys that carry mass (after pruning). */
    public int size() {
        return compaction.size();
    }

    /**
     * The fold and the value refit.
     *
     * @param scaledQueries A = reference queries · 1/√d [m, d]
     * @param direction u from the KKT system [d]
     * @param referenceDirection u from the closed form [d]
     * @param foldedKeys K_f = C_k + β·uᵀ [size, d]
     * @param roundedKeys K_h = fp16(K_f) [size, d]
     * @param roundedReferenceWeights X_h = softmax(Q·K_hᵀ/√d) on the reference queries [m, size]
     * @param refitValues C_v' = lstsq(X_h, Y), the values refit on the rounded keys [size, d]
     */
    public record Fold(double[] scaledQueries, double[] direction, double[] referenceDirection, double[] foldedKeys,
                       double[] roundedKeys, double[] roundedReferenceWeights, double[] refitValues) {
    }

    /**
     * Freezing and online use of the frozen cache.
     *
     * @param cacheSha256AtFreeze the cache's bytes when frozen
     * @param cacheSha256AfterOnline the same after the test queries read it
     * @param fitsAfterFreeze fits run after freezing (the mechanism makes none)
     * @param fitLog every fit, in order, marked when it ran after freezing
     * @param deployedOutputs o(K_h, C_v') on the test queries: the frozen cache's online answers [mt, d]
     */
    public record Online(String cacheSha256AtFreeze, String cacheSha256AfterOnline, int fitsAfterFreeze,
                         List<String> fitLog, double[] deployedOutputs) {
    }

    /**
     * The paths the metrics compare the deployed cache with, on the test queries (not part of the cache).
     *
     * @param unroundedOutputs o(K_f, C_v') [mt, d]
     * @param biasedOutputs o_bias = softmax(q·C_kᵀ/√d + β)·C_v [mt, d]
     * @param droppedBiasOutputs softmax(q·C_kᵀ/√d)·C_v [mt, d]
     * @param sameValueOutputs o(K_h, C_v), the folded-rounded path with the biased path's values [mt, d]
     * @param outputBounds the TV/Pinsker bound per test query [mt]
     */
    public record Evaluation(double[] unroundedOutputs, double[] biasedOutputs, double[] droppedBiasOutputs,
                             double[] sameValueOutputs, double[] outputBounds) {
    }
}
