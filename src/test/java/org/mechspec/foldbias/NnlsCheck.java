package org.mechspec.foldbias;

/**
 * nnls_weights_solve_definition: the NNLS weights w on the selected keys satisfy the KKT conditions of
 * min ‖E[:, sel]·w − rowsum(E)‖², w ≥ 0, with E = exp(s − row max), s = (q·k)·(1/√d) over all n keys, recomputed
 * from the raw inputs (the older KKT check reads E and rowsum(E) from the run, so a wrong E passes it).
 */
final class NnlsCheck {
    private NnlsCheck() {
    }

    /**
     * @param violation max_j of the KKT violation (|g_j| where w_j > 0, −g_j where w_j = 0) over ‖E_sel‖_F·‖b‖₂
     * @param worstRatio max_j of the violation over its allowance (holds when ≤ 1 and no w_j < 0)
     */
    record Result(double violation, double worstRatio, long negative) {
        boolean holds() {
            return negative == 0 && worstRatio <= 1.0;
        }
    }

    static Result of(FoldBiasInputs in, int[] selected, double[] w) {
        FoldBiasConfig c = in.config();
        int d = c.d();
        int n = c.n();
        int m = c.referenceQueries();
        int t = selected.length;
        double[] s = Definitions.logits(in.referenceQueries(), m, in.keys(), n, d, null);
        double[] e = new double[m * t];
        double[] b = new double[m];
        for (int i = 0; i < m; i++) {
            double max = Double.NEGATIVE_INFINITY;
            for (int j = 0; j < n; j++) {
                max = Math.max(max, s[i * n + j]);
            }
            for (int j = 0; j < n; j++) {
                b[i] += StrictMath.exp(s[i * n + j] - max);
            }
            for (int r = 0; r < t; r++) {
                e[i * t + r] = StrictMath.exp(s[i * n + selected[r]] - max);
            }
        }
        double[] residual = new double[m]; // E·w − b
        double[] size = new double[m]; // |E|·|w| + |b|
        for (int i = 0; i < m; i++) {
            residual[i] = -b[i];
            size[i] = b[i];
            for (int r = 0; r < t; r++) {
                residual[i] += e[i * t + r] * w[r];
                size[i] += e[i * t + r] * Math.abs(w[r]);
            }
        }
        double normE = 0.0;
        double norm1 = 0.0;
        for (int r = 0; r < t; r++) {
            double col = 0.0;
            for (int i = 0; i < m; i++) {
                col += e[i * t + r];
                normE += e[i * t + r] * e[i * t + r];
            }
            norm1 = Math.max(norm1, col);
        }
        normE = StrictMath.sqrt(normE);
        double normB = StrictMath.sqrt(dot(b, b));
        double scale = normE * normB > 0 ? normE * normB : 1.0;
        double logits = 0.0;
        for (double x : Definitions.logitScale(in.referenceQueries(), m, in.keys(), n, d, null)) {
            logits = Math.max(logits, x);
        }
        // Allowance per key: the solver's stopping tolerance (MATLAB lsqnonneg's 10·eps·‖E‖₁·max(m, t), the
        // manifest's rule), the passive sub-problem's rounding ROUNDOFF·(m + t)·‖E_j‖₂·(‖r‖₂ + ‖E‖_F‖w‖₂ + ‖b‖₂), and
        // the two computations of E, which differ by a relative ρ = ROUNDOFF·(d·Λ + n): ρ·(|E|ᵀ(|r| + |E||w| + |b|))_j.
        double stop = 10 * Math.ulp(1.0) * norm1 * Math.max(m, t);
        double rho = Definitions.ROUNDOFF * (d * logits + n);
        double normR = StrictMath.sqrt(dot(residual, residual));
        double normW = StrictMath.sqrt(dot(w, w));
        double violation = 0.0;
        double worst = 0.0;
        long negative = 0;
        for (int r = 0; r < t; r++) {
            double g = 0.0;
            double col = 0.0;
            double perturbation = 0.0;
            for (int i = 0; i < m; i++) {
                g += e[i * t + r] * residual[i];
                col += e[i * t + r] * e[i * t + r];
                perturbation += e[i * t + r] * (Math.abs(residual[i]) + size[i]);
            }
            double allowance = stop + Definitions.ROUNDOFF * (m + t) * StrictMath.sqrt(col) * (normR + normE * normW + normB)
                    + rho * perturbation;
            negative += w[r] < 0 ? 1 : 0;
            double v = w[r] > 0 ? Math.abs(g) : Math.max(0.0, -g);
            violation = Math.max(violation, v / scale);
            worst = Math.max(worst, v == 0 ? 0.0 : v / allowance);
        }
        return new Result(violation, worst, negative);
    }

    private static double dot(double[] a, double[] b) {
        double s = 0.0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }
}
