package org.mechspec.foldbias;

import java.util.Arrays;

/**
 * output_bound_matches_definition: the mechanism's per-query output bound equals the bound recomputed from its
 * definition (protocols.md, fold-bias) with the mechanism's compact keys C_k, β, rounded keys K_h and values C_v:
 * ℓ = q·C_kᵀ/√d + β, ℓ′ = q·K_hᵀ/√d, δ = ℓ′ − ℓ, p = softmax(ℓ), KL = Σ_j p_j·ln(p_j/p′_j) with p′ = softmax(ℓ′),
 * T = min(tanh(osc(δ)/4), √(KL/2)), bound = T·‖(max_j C_v[j,c] − min_j C_v[j,c])_c‖₂.
 */
final class BoundCheck {
    private static final double U = Definitions.ROUNDOFF;

    private BoundCheck() {
    }

    /**
     * @param maxError max over test queries of |bound_mechanism − bound_definition|
     * @param worstRatio max over test queries of that difference over the query's tolerance (holds when ≤ 1)
     */
    record Result(double maxError, double worstRatio, int worstQuery) {
        boolean holds() {
            return worstRatio <= 1.0;
        }
    }

    static Result of(FoldBiasRun r, double[] testQueries) {
        FoldBiasConfig c = r.config();
        int d = c.d();
        int size = r.size();
        double[] ck = r.compaction().compactKeys();
        double[] beta = r.compaction().beta();
        double[] kh = r.fold().roundedKeys();
        double range = rangeNorm(r.compaction().compactValues(), size, d);
        double maxError = 0.0;
        double worst = 0.0;
        int worstQuery = -1;
        for (int i = 0; i < c.testQueries(); i++) {
            double[] q = Arrays.copyOfRange(testQueries, i * d, (i + 1) * d);
            double[] l = Definitions.logits(q, 1, ck, size, d, beta);
            double[] lp = Definitions.logits(q, 1, kh, size, d, null);
            double[] p = Definitions.softmax(l, 1, size);
            double lse = logSumExp(l);
            double lpse = logSumExp(lp);
            double kl = 0.0;
            double lo = Double.POSITIVE_INFINITY;
            double hi = Double.NEGATIVE_INFINITY;
            double meanDelta = 0.0;
            for (int j = 0; j < size; j++) {
                kl += p[j] * ((l[j] - lse) - (lp[j] - lpse)); // p_j·ln(p_j/p′_j)
                double delta = lp[j] - l[j];
                lo = Math.min(lo, delta);
                hi = Math.max(hi, delta);
                meanDelta += p[j] * delta;
            }
            kl = Math.max(0.0, kl);
            double osc = hi - lo;
            double tanhTerm = StrictMath.tanh(osc / 4);
            double pinsker = StrictMath.sqrt(kl / 2);
            double bound = Math.min(tanhTerm, pinsker) * range;
            double error = Math.abs(r.evaluation().outputBounds()[i] - bound);
            double ratio = error == 0 ? 0.0 : error / tolerance(q, ck, kh, beta, size, d, osc, meanDelta, kl, tanhTerm, range);
            maxError = Math.max(maxError, error);
            if (ratio > worst || worstQuery < 0) {
                worst = ratio;
                worstQuery = i;
            }
        }
        return new Result(maxError, worst, worstQuery);
    }

    /**
     * First-order error analysis of both computations, in units of ROUNDOFF (64·eps), with Λ the largest logit's
     * dot-product size (s·Σ_c|q_c|(|C_k[j,c]| + |K_h[j,c]|) + |β_j|):
     * δ differs by at most Dδ = (d + 2)·Λ per key; the weights p by a relative ρ = d·Λ + size (dot products, exp,
     * normaliser). KL moves by at most 2·Dδ through δ (its gradient in δ is p′ − p), by ρ·(expm1(osc) + osc + 1 + |δ̄|)
     * through p, and by (size + 2)·(1 + Λ + ln size) in its own evaluation (log-sum-exps of size up to Λ + ln size).
     * Then |√(x/2) − √(y/2)| ≤ min(√(E/2), (E/2)/√(KL/2)), tanh(osc/4) moves by at most Dδ/2, min is 1-Lipschitz,
     * and the value range norm is exact to ROUNDOFF·‖r‖₂.
     */
    private static double tolerance(double[] q, double[] ck, double[] kh, double[] beta, int size, int d, double osc,
                                    double meanDelta, double kl, double tanhTerm, double range) {
        double s = Definitions.scale(d);
        double lambda = 0.0;
        for (int j = 0; j < size; j++) {
            double dot = 0.0;
            for (int c = 0; c < d; c++) {
                dot += Math.abs(q[c]) * (Math.abs(ck[j * d + c]) + Math.abs(kh[j * d + c]));
            }
            lambda = Math.max(lambda, dot * s + Math.abs(beta[j]));
        }
        double dDelta = U * (d + 2) * lambda;
        double rho = U * (d * lambda + size);
        double klError = 2 * dDelta + rho * (StrictMath.expm1(osc) + osc + 1 + Math.abs(meanDelta))
                + U * (size + 2) * (1 + lambda + StrictMath.log(size));
        double sqrtError = kl > 0 ? Math.min(StrictMath.sqrt(klError / 2), (klError / 2) / StrictMath.sqrt(kl / 2))
                : StrictMath.sqrt(klError / 2);
        double tvError = Math.max(dDelta / 2 + U * tanhTerm, sqrtError + U * StrictMath.sqrt(kl / 2));
        double tv = Math.min(tanhTerm, StrictMath.sqrt(kl / 2));
        return (tvError + 2 * U * tv) * range;
    }

    private static double logSumExp(double[] x) {
        double max = Double.NEGATIVE_INFINITY;
        for (double v : x) {
            max = Math.max(max, v);
        }
        double sum = 0.0;
        for (double v : x) {
            sum += StrictMath.exp(v - max);
        }
        return max + StrictMath.log(sum);
    }

    /** ‖(max_j v[j,c] − min_j v[j,c])_c‖₂ for v [rows, cols]. */
    static double rangeNorm(double[] v, int rows, int cols) {
        double sum = 0.0;
        for (int c = 0; c < cols; c++) {
            double lo = v[c];
            double hi = v[c];
            for (int j = 1; j < rows; j++) {
                lo = Math.min(lo, v[j * cols + c]);
                hi = Math.max(hi, v[j * cols + c]);
            }
            sum += (hi - lo) * (hi - lo);
        }
        return StrictMath.sqrt(sum);
    }
}
