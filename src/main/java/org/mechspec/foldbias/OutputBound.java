package org.mechspec.foldbias;

/**
 * A bound on how far the folded-rounded path's output can move from the biased path's, computed from the
 * biased weights p and the exact logit difference δ alone (never from the perturbed weights p′):
 * TV(p, p′) ≤ T = min(tanh(osc(δ)/4), √(KL/2)), KL(p‖p′) = ln Σ_j p_j e^{δ_j} − Σ_j p_j δ_j (Pinsker), and for
 * values with per-column ranges r_c, ‖o′ − o‖₂ ≤ T·‖r‖₂.
 */
final class OutputBound {
    private OutputBound() {
    }

    /**
     * T = min(tanh(osc(δ)/4), √(KL/2)); the output bound is T·‖(max_j V[j,c] − min_j V[j,c])_c‖₂.
     *
     * @param p biased-path weights [keys] (sum 1)
     * @param delta δ_j = logit of the folded-rounded path − logit of the biased path [keys]
     */
    static double tv(double[] p, double[] delta) {
        return Math.min(tanhTerm(delta), StrictMath.sqrt(kl(p, delta) / 2));
    }

    /** tanh(osc(δ)/4), osc = max δ − min δ. */
    static double tanhTerm(double[] delta) {
        double lo = Double.POSITIVE_INFINITY;
        double hi = Double.NEGATIVE_INFINITY;
        for (double x : delta) {
            lo = Math.min(lo, x);
            hi = Math.max(hi, x);
        }
        return StrictMath.tanh((hi - lo) / 4);
    }

    /** KL(p‖p′) = ln Σ_j p_j e^{δ_j} − Σ_j p_j δ_j, clamped at 0. */
    static double kl(double[] p, double[] delta) {
        double mean = 0.0;
        for (int j = 0; j < p.length; j++) {
            mean += p[j] * delta[j];
        }
        // KL = ln Σ p_j e^{δ_j − δ̄} with δ̄ = Σ p_j δ_j; log1p/expm1 keep it accurate when δ is tiny.
        double sum = 0.0;
        for (int j = 0; j < p.length; j++) {
            sum += p[j] * StrictMath.expm1(delta[j] - mean);
        }
        return Math.max(0.0, StrictMath.log1p(sum));
    }

    /** ‖(max_j V[j,c] − min_j V[j,c])_c‖₂ for V [rows, cols]. */
    static double valueRangeNorm(double[] v, int rows, int cols) {
        double s = 0.0;
        for (int c = 0; c < cols; c++) {
            double lo = Double.POSITIVE_INFINITY;
            double hi = Double.NEGATIVE_INFINITY;
            for (int j = 0; j < rows; j++) {
                lo = Math.min(lo, v[j * cols + c]);
                hi = Math.max(hi, v[j * cols + c]);
            }
            s += (hi - lo) * (hi - lo);
        }
        return Math.sqrt(s);
    }
}
