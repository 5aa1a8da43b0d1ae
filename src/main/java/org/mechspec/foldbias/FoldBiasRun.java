package org.mechspec.foldbias;

import java.util.List;

/**
 * Everything one fold-bias run produced, offline and online, for the metrics and checks to read.
 *
 * @param scaledQueries A = reference queries · 1/√d [m, d]
 * @param direction u from the KKT system [d]
 * @param referenceDirection u from the closed form [d]
 * @param foldedKeys K_f = C_k + β·uᵀ [size, d]
 * @param roundedKeys K_h = fp16(K_f) [size, d]
 * @param refitValues C_v', refit on the rounded keys [size, d]
 * @param roundedReferenceWeights X_h = softmax(Q·K_hᵀ/√d) on the reference queries [m, size]
 * @param deployedOutputs o(K_h, C_v') on the test queries: the frozen cache's online answers [mt, d]
 * @param unroundedOutputs o(K_f, C_v') [mt, d]
 * @param biasedOutputs o_bias = softmax(q·C_kᵀ/√d + β)·C_v [mt, d]
 * @param droppedBiasOutputs softmax(q·C_kᵀ/√d)·C_v [mt, d]
 * @param sameValueOutputs o(K_h, C_v), the folded-rounded path with the biased path's values [mt, d]
 * @param outputBounds the TV/Pinsker bound per test query [mt]
 * @param fitLog every fit, in order, marked when it ran after freezing
 */
public record FoldBiasRun(FoldBiasConfig config, Compaction compaction, double[] scaledQueries, double[] direction,
                          double[] referenceDirection, double[] foldedKeys, double[] roundedKeys,
                          double[] refitValues, double[] roundedReferenceWeights, String cacheSha256AtFreeze,
                          String cacheSha256AfterOnline, int fitsAfterFreeze, List<String> fitLog,
                          double[] deployedOutputs, double[] unroundedOutputs, double[] biasedOutputs,
                          double[] droppedBiasOutputs, double[] sameValueOutputs, double[] outputBounds) {

    /** Compact keys that carry mass (after pruning). */
    public int size() {
        return compaction.size();
    }
}
