package org.mechspec.foldbias;

/**
 * value_refit_solves_definition_least_squares: the refit values C_v' satisfy the normal equations
 * X_hᵀ(X_h·C_v' − Y) = 0 with X_h = softmax(Q·K_hᵀ/√d) and Y = softmax(Q·Kᵀ/√d)·V recomputed from the raw inputs
 * and the rounded keys, not read from the run (the existing normal-equation check uses the run's own X_h and Y).
 */
final class RefitCheck {
    private RefitCheck() {
    }

    /** @param residual max |X_hᵀ(X_h·C_v' − Y)|; @param tolerance its allowance */
    record Result(double residual, double tolerance) {
        boolean holds() {
            return residual <= tolerance;
        }
    }

    static Result of(FoldBiasInputs in, FoldBiasRun r) {
        FoldBiasConfig c = in.config();
        int d = c.d();
        int n = c.n();
        int m = c.referenceQueries();
        int size = r.size();
        double[] q = in.referenceQueries();
        double[] x = Definitions.weights(q, m, r.fold().roundedKeys(), size, d, null);
        double[] p = Definitions.weights(q, m, in.keys(), n, d, null);
        double[] y = Definitions.mix(p, m, n, in.values(), d);
        double[] absValues = new double[in.values().length];
        for (int i = 0; i < absValues.length; i++) {
            absValues[i] = Math.abs(in.values()[i]);
        }
        double[] cv = r.fold().refitValues();
        double[] fitted = Definitions.mix(x, m, size, cv, d);
        double[] residual = new double[size * d];
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < size; j++) {
                double w = x[i * size + j];
                for (int k = 0; k < d; k++) {
                    residual[j * d + k] += w * (fitted[i * d + k] - y[i * d + k]);
                }
            }
        }
        double logits = 0.0;
        for (double v : Definitions.logitScale(q, m, in.keys(), n, d, null)) {
            logits = Math.max(logits, v);
        }
        for (double v : Definitions.logitScale(q, m, r.fold().roundedKeys(), size, d, null)) {
            logits = Math.max(logits, v);
        }
        // Weights differ between the mechanism's and this computation by a relative ρ = ROUNDOFF·(d·Λ + n) (dot
        // products, exp, normaliser), so ‖ΔX‖ ≤ ρ‖X‖ and ‖ΔY‖ ≤ ρ‖|P|·|V|‖; the residual then moves by at most
        // ρ‖X‖(2‖X‖‖C‖ + ‖Y‖ + ‖|P||V|‖), on top of the solve's own ROUNDOFF·‖X‖(‖X‖‖C‖ + ‖Y‖) (all Frobenius norms).
        double rho = Definitions.ROUNDOFF * (d * logits + n);
        double nx = norm(x);
        double nc = norm(cv);
        double ny = norm(y);
        double npv = norm(Definitions.mix(p, m, n, absValues, d));
        double tolerance = Definitions.ROUNDOFF * nx * (nx * nc + ny) + rho * nx * (2 * nx * nc + ny + npv);
        double max = 0.0;
        for (double v : residual) {
            max = Math.max(max, Math.abs(v));
        }
        return new Result(max, tolerance);
    }

    private static double norm(double[] a) {
        double s = 0.0;
        for (double v : a) {
            s += v * v;
        }
        return StrictMath.sqrt(s);
    }
}
