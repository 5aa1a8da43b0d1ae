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

    /**
     * ‖X_h‖_F·(‖X_h‖_F·‖C_v'‖_F + ‖Y‖_F) + ‖X_h‖_F²·‖X_h⁺‖₂·‖Y‖_F. The first term is the size of X_hᵀ·X_h·C_v' and
     * X_hᵀ·Y. The second is the solve's, on the pseudo-inverse path (wide or rank-deficient X_h): C_v' = X_h⁺·Y is
     * formed from the explicit pseudo-inverse, whose product with Y errs by u·‖X_h⁺‖·‖Y‖ in every direction, not only
     * along the small singular vectors, and Xᵀ·X amplifies that by ‖X‖² in the normal equations. ‖X_h⁺‖₂ is one over
     * the smallest singular value the solver keeps (above EJML's cutoff eps·max(m, t)·σ_max). A stress run (2000
     * examples) found the first term alone short by 1620u on d = 1, n = 26, t = 19, 17 queries, where σ_min kept = 5.5e-9.
     */
    static double normalEquationScale(FoldBiasRun r) {
        double[] xh = r.fold().roundedReferenceWeights();
        double x = Dense.norm(xh);
        double y = Dense.norm(r.compaction().target());
        return x * (x * Dense.norm(r.fold().refitValues()) + y) + x * x * pseudoInverseNorm(xh, r.config().referenceQueries(), r.size()) * y;
    }

    /** ‖X⁺‖₂ as the solver forms it: one over the smallest singular value above eps·max(rows, cols)·σ_max (0 for X = 0). */
    static double pseudoInverseNorm(double[] x, int rows, int cols) {
        var svd = org.ejml.dense.row.factory.DecompositionFactory_DDRM.svd(rows, cols, false, false, true);
        if (!svd.decompose(org.ejml.data.DMatrixRMaj.wrap(rows, cols, x.clone()))) {
            throw new ArithmeticException("SVD of the " + rows + "x" + cols + " weights failed");
        }
        double[] sv = svd.getSingularValues();
        double max = 0;
        for (double s : sv) {
            max = Math.max(max, s);
        }
        double cutoff = org.ejml.UtilEjml.EPS * Math.max(rows, cols) * max;
        double kept = Double.POSITIVE_INFINITY;
        for (double s : sv) {
            if (s > cutoff) {
                kept = Math.min(kept, s);
            }
        }
        return Double.isInfinite(kept) ? 0 : 1 / kept;
    }
}
