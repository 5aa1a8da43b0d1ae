package org.mechspec.foldbias;

/**
 * fold_direction_is_constrained_minimizer: u minimizes f(u) = Σ_i (A_i·u − 1)² + λ‖u‖² subject to mean_i(A_i·u) = 1,
 * checked on the definition itself: A = Q·(1/√d) from the raw reference queries, the constraint a·u = 1
 * (a = mean row of A), and the Lagrange condition g ∥ a for the half gradient g = Aᵀ(A·u − 1) + λu (formed without a
 * Gram matrix): the part of g orthogonal to a vanishes. The older checks read A from the run and compare the KKT
 * solve with a closed form from the same Gram matrix; nothing here is the mechanism's code.
 */
final class FoldDirectionCheck {
    private FoldDirectionCheck() {
    }

    /**
     * @param residual max |g − (g·a/a·a)·a|, with its rounding allowance {@code tolerance}
     * @param constraintError |a·u − 1|, with its rounding allowance {@code constraintTolerance}
     */
    record Result(double residual, double tolerance, double constraintError, double constraintTolerance) {
        boolean holds() {
            return residual <= tolerance && constraintError <= constraintTolerance;
        }
    }

    /** @param in the problem as declared (its λ is the definition's); @param u the mechanism's fold direction */
    static Result of(FoldBiasInputs in, double[] u) {
        FoldBiasConfig c = in.config();
        int d = c.d();
        int m = c.referenceQueries();
        double s = Definitions.scale(d);
        double[] a = new double[m * d];
        for (int i = 0; i < a.length; i++) {
            a[i] = in.referenceQueries()[i] * s;
        }
        double[] g = new double[d];
        double[] gScale = new double[d]; // Σ_i |A_ic|·(Σ_k |A_ik||u_k| + 1): the size of the terms behind g_c
        double[] mean = new double[d];
        double projection = 0.0; // mean_i A_i·u
        double projectionScale = 0.0; // mean_i Σ_k |A_ik·u_k|
        for (int i = 0; i < m; i++) {
            double au = 0.0;
            double auAbs = 0.0;
            for (int k = 0; k < d; k++) {
                au += a[i * d + k] * u[k];
                auAbs += Math.abs(a[i * d + k] * u[k]);
            }
            projection += au / m;
            projectionScale += auAbs / m;
            for (int k = 0; k < d; k++) {
                g[k] += a[i * d + k] * (au - 1.0);
                gScale[k] += Math.abs(a[i * d + k]) * (auAbs + 1.0);
                mean[k] += a[i * d + k] / m;
            }
        }
        double ga = 0.0;
        double aa = 0.0;
        double uMax = 0.0;
        double aMax = 0.0;
        double scaleMax = 0.0;
        for (int k = 0; k < d; k++) {
            g[k] += c.lambda() * u[k];
            ga += g[k] * mean[k];
            aa += mean[k] * mean[k];
            uMax = Math.max(uMax, Math.abs(u[k]));
            aMax = Math.max(aMax, Math.abs(mean[k]));
            scaleMax = Math.max(scaleMax, gScale[k]);
        }
        double multiplier = ga / aa; // ν/2
        double residual = 0.0;
        for (int k = 0; k < d; k++) {
            residual = Math.max(residual, Math.abs(g[k] - multiplier * mean[k]));
        }
        // A backward-stable solve of the KKT system leaves a first-block residual of order (d + 1)·u·(‖2(AᵀA + λI)‖·|u|
        // + |a|·|ν| + ‖2Aᵀ1‖), its Gram matrix carries m-term sums, and g here has m- and d-term sums of the same
        // terms: ROUNDOFF·(m + d)·(max_c gScale_c + λ·max|u| + |ν/2|·max|a|) covers all three.
        double tolerance = Definitions.ROUNDOFF * (m + d) * (scaleMax + c.lambda() * uMax + Math.abs(multiplier) * aMax);
        // The constraint row of the same solve, and the m d-term dot products and the mean taken here.
        double constraintTolerance = Definitions.ROUNDOFF * (m + d) * (projectionScale + 1.0);
        return new Result(residual, tolerance, Math.abs(projection - 1.0), constraintTolerance);
    }
}
