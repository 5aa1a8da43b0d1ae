package org.mechspec.foldbias;

import org.ejml.dense.row.NormOps_DDRM;

/**
 * Tolerances of the property halves. The manifest's absolute thresholds are stated for the protocol's scale;
 * a generated problem can be worse scaled (tiny mean query, nearly collinear keys), and then its own rounding
 * floor is the honest bar: max(threshold, 64·eps·S), S the first-order rounding scale of the quantity.
 */
final class PropertyTolerance {
    static final double ROUNDOFF = 64 * Math.ulp(1.0);

    private PropertyTolerance() {
    }

    static double of(double threshold, double scale) {
        return Math.max(threshold, ROUNDOFF * scale);
    }

    /** d · max_ij Σ_c |A_ic|·(|C_k[j,c]| + |β_j·u_c|): the dot products behind A·K_fᵀ and its rank-one form. */
    static double logitScale(FoldBiasRun r) {
        int d = r.config().d();
        int m = r.config().referenceQueries();
        double[] a = r.fold().scaledQueries();
        double[] ck = r.compaction().compactKeys();
        double[] beta = r.compaction().beta();
        double[] u = r.fold().direction();
        double worst = 0.0;
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < r.size(); j++) {
                double s = 0.0;
                for (int c = 0; c < d; c++) {
                    s += Math.abs(a[i * d + c]) * (Math.abs(ck[j * d + c]) + Math.abs(beta[j] * u[c]));
                }
                worst = Math.max(worst, s);
            }
        }
        return d * worst;
    }

    /** d · max_i Σ_c |A_ic·u_c|. */
    static double projectionScale(FoldBiasRun r) {
        int d = r.config().d();
        double[] a = r.fold().scaledQueries();
        double worst = 0.0;
        for (int i = 0; i < r.config().referenceQueries(); i++) {
            double s = 0.0;
            for (int c = 0; c < d; c++) {
                s += Math.abs(a[i * d + c] * r.fold().direction()[c]);
            }
            worst = Math.max(worst, s);
        }
        return d * worst;
    }

    /** κ₂(KKT)·max|u|: first-order perturbation bound of a solve. */
    static double kktScale(FoldBiasRun r) {
        var kkt = FoldDirection.kktMatrix(r.fold().scaledQueries(), r.config().referenceQueries(), r.config().d(),
                r.config().lambda());
        return NormOps_DDRM.conditionP2(kkt) * Dense.maxAbs(r.fold().direction());
    }

    /** ‖X_h‖_F·(‖X_h‖_F·‖C_v'‖_F + ‖Y‖_F): the size of X_hᵀ·X_h·C_v' and X_hᵀ·Y. */
    static double normalEquationScale(FoldBiasRun r) {
        double x = Dense.norm(r.fold().roundedReferenceWeights());
        return x * (x * Dense.norm(r.fold().refitValues()) + Dense.norm(r.compaction().target()));
    }
}
