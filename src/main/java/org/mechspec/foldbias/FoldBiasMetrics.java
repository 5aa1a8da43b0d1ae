package org.mechspec.foldbias;

import org.mechspec.compute.HalfFloat;

/**
 * The measured quantities of one run (protocols.md, fold-bias), computed from the run's arrays.
 *
 * @param logitIdentityError max |A·K_fᵀ − (A·C_kᵀ + (A·u)·βᵀ)| over reference queries and compact keys
 * @param projectionMeanError |mean_i(A_i·u) − 1|
 * @param kktReferenceError max |u_kkt − u_ref|
 * @param valueNormalEquationError max |X_hᵀ(X_h·C_v' − Y)|
 * @param cacheRoundingAttentionGap max over test queries of ‖o(K_h, C_v') − o(K_f, C_v')‖∞
 * @param dropBiasOutputError mean over test queries of ‖softmax(q·C_kᵀ/√d)·C_v − o_bias‖₂
 * @param minimumOutputBoundSlack min over test queries of (bound − ‖o(K_h, C_v) − o_bias‖₂)
 * @param modelCalls fits run after the cache was frozen
 * @param compactKeysKept compact keys with NNLS weight > 1e-12
 * @param nnlsKktViolation relative KKT violation of the NNLS weights (see {@link Nnls#kktViolation})
 * @param foldedOutputError mean over test queries of ‖o(K_h, C_v) − o_bias‖₂: the folded path's error
 * @param refitKeysOffFp16Grid elements of K_h, the keys the value refit receives, that are not fp16 values
 * @param refitKeysChangedByRounding elements where those keys differ from K_f
 * @param negativeWeights NNLS weights below zero
 */
public record FoldBiasMetrics(double logitIdentityError, double projectionMeanError, double kktReferenceError,
                              double valueNormalEquationError, double cacheRoundingAttentionGap,
                              double dropBiasOutputError, double minimumOutputBoundSlack, long modelCalls,
                              long compactKeysKept, double nnlsKktViolation, double foldedOutputError,
                              long refitKeysOffFp16Grid, long refitKeysChangedByRounding, long negativeWeights,
                              String cacheSha256AtFreeze, String cacheSha256AfterOnline) {

    public static FoldBiasMetrics of(FoldBiasRun r) {
        FoldBiasConfig c = r.config();
        Compaction comp = r.compaction();
        int d = c.d();
        int m = c.referenceQueries();
        int mt = c.testQueries();
        int size = r.size();
        FoldBiasRun.Fold f = r.fold();
        FoldBiasRun.Evaluation e = r.evaluation();
        double[] a = f.scaledQueries();

        double[] au = Dense.times(a, m, d, f.direction());
        double[] folded = Dense.timesTransposed(a, m, d, f.foldedKeys(), size);
        double[] compact = Dense.timesTransposed(a, m, d, comp.compactKeys(), size);
        double logitIdentity = 0.0;
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < size; j++) {
                double expected = compact[i * size + j] + au[i] * comp.beta()[j];
                logitIdentity = Math.max(logitIdentity, Math.abs(folded[i * size + j] - expected));
            }
        }
        double meanProjection = 0.0;
        for (double x : au) {
            meanProjection += x;
        }
        meanProjection /= m;

        double[] residual = Dense.minus(Dense.times(f.roundedReferenceWeights(), m, size, f.refitValues(), d),
                comp.target());
        double normalEquations = Dense.maxAbs(Dense.transposedTimesMatrix(f.roundedReferenceWeights(), m, size,
                residual, d));

        double dropped = 0.0;
        double foldedError = 0.0;
        double minSlack = Double.POSITIVE_INFINITY;
        for (int i = 0; i < mt; i++) {
            dropped += Dense.rowDistance(e.droppedBiasOutputs(), e.biasedOutputs(), i, d);
            double sameValueError = Dense.rowDistance(e.sameValueOutputs(), e.biasedOutputs(), i, d);
            foldedError += sameValueError;
            minSlack = Math.min(minSlack, e.outputBounds()[i] - sameValueError);
        }

        long offGrid = 0;
        long changed = 0;
        for (int i = 0; i < f.roundedKeys().length; i++) {
            offGrid += HalfFloat.isHalfRepresentable(f.roundedKeys()[i]) ? 0 : 1;
            changed += f.roundedKeys()[i] != f.foldedKeys()[i] ? 1 : 0;
        }
        long negative = 0;
        for (double w : comp.weights()) {
            negative += w < 0 ? 1 : 0;
        }

        return new FoldBiasMetrics(
                logitIdentity,
                Math.abs(meanProjection - 1.0),
                Dense.maxAbsDifference(f.direction(), f.referenceDirection()),
                normalEquations,
                Dense.maxAbsDifference(r.online().deployedOutputs(), e.unroundedOutputs()),
                dropped / mt,
                minSlack,
                r.online().fitsAfterFreeze(),
                size,
                Nnls.kktViolation(comp.nnlsMatrix(), m, comp.selected().length, comp.nnlsTarget(), comp.weights()),
                foldedError / mt,
                offGrid,
                changed,
                negative,
                r.online().cacheSha256AtFreeze(),
                r.online().cacheSha256AfterOnline());
    }
}
