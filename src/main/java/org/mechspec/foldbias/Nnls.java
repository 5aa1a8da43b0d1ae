package org.mechspec.foldbias;

/**
 * Lawson–Hanson active-set non-negative least squares: minimize ‖A·x − b‖² subject to x ≥ 0.
 * Deterministic: ties in the entering index go to the lower index; sub-problems use {@link LeastSquares}.
 */
final class Nnls {
    private Nnls() {
    }

    /**
     * @param a [rows, cols] row-major
     * @return x ≥ 0 with the KKT conditions satisfied to the termination tolerance
     * @throws ArithmeticException when the iteration cap (3·cols outer steps) is hit
     */
    static double[] solve(double[] a, int rows, int cols, double[] b) {
        double[] x = new double[cols];
        boolean[] passive = new boolean[cols];
        // MATLAB lsqnonneg's default: 10·eps·‖A‖₁·max(rows, cols).
        double tol = 10 * Math.ulp(1.0) * norm1(a, rows, cols) * Math.max(rows, cols);
        double[] w = negativeHalfGradient(a, rows, cols, b, x);
        int outer = 0;
        while (true) {
            int enter = -1;
            for (int j = 0; j < cols; j++) {
                if (!passive[j] && w[j] > tol && (enter < 0 || w[j] > w[enter])) {
                    enter = j;
                }
            }
            if (enter < 0) {
                return x;
            }
            if (++outer > 3 * cols) {
                throw new ArithmeticException("NNLS (Lawson–Hanson) did not converge in " + 3 * cols + " outer iterations");
            }
            passive[enter] = true;
            for (int inner = 0; ; inner++) {
                if (inner > 3 * cols) {
                    throw new ArithmeticException("NNLS (Lawson–Hanson) inner loop did not converge");
                }
                double[] z = passiveSolution(a, rows, cols, b, passive);
                int blocking = -1;
                double alpha = Double.POSITIVE_INFINITY;
                for (int j = 0; j < cols; j++) {
                    if (passive[j] && z[j] <= 0) {
                        double step = x[j] / (x[j] - z[j]);
                        if (step < alpha) {
                            alpha = step;
                            blocking = j;
                        }
                    }
                }
                if (blocking < 0) {
                    x = z;
                    break;
                }
                // Step from x towards z until the first passive variable reaches zero; it and any others at or
                // below the tolerance leave the passive set.
                for (int j = 0; j < cols; j++) {
                    x[j] += alpha * (z[j] - x[j]);
                }
                x[blocking] = 0.0;
                for (int j = 0; j < cols; j++) {
                    if (passive[j] && x[j] <= tol) {
                        passive[j] = false;
                        x[j] = 0.0;
                    }
                }
            }
            w = negativeHalfGradient(a, rows, cols, b, x);
        }
    }

    /** Least squares on the passive columns, zero elsewhere. */
    private static double[] passiveSolution(double[] a, int rows, int cols, double[] b, boolean[] passive) {
        int count = 0;
        for (boolean p : passive) {
            count += p ? 1 : 0;
        }
        int[] index = new int[count];
        for (int j = 0, k = 0; j < cols; j++) {
            if (passive[j]) {
                index[k++] = j;
            }
        }
        double[] sub = LeastSquares.solve(Dense.columns(a, rows, cols, index), rows, count, b, 1);
        double[] z = new double[cols];
        for (int k = 0; k < count; k++) {
            z[index[k]] = sub[k];
        }
        return z;
    }

    /** Aᵀ(b − A·x): minus half the gradient of ‖A·x − b‖². */
    static double[] negativeHalfGradient(double[] a, int rows, int cols, double[] b, double[] x) {
        double[] ax = Dense.times(a, rows, cols, x);
        double[] r = new double[rows];
        for (int i = 0; i < rows; i++) {
            r[i] = b[i] - ax[i];
        }
        return Dense.transposedTimes(a, rows, cols, r);
    }

    /**
     * How far x is from the NNLS optimality (KKT) conditions, relative to ‖A‖_F·‖b‖₂ (a bound on every gradient
     * entry at a point no worse than x = 0): the largest of −x_j (feasibility), |g_j| where x_j > 0
     * (stationarity) and −g_j where x_j = 0 (dual feasibility), with g = Aᵀ(A·x − b). A negative x_j counts
     * relative to max|x|.
     */
    static double kktViolation(double[] a, int rows, int cols, double[] b, double[] x) {
        double[] minusG = negativeHalfGradient(a, rows, cols, b, x);
        double scale = Dense.norm(a) * Dense.norm(b);
        scale = scale > 0 ? scale : 1.0;
        double xScale = Dense.maxAbs(x);
        double worst = 0.0;
        for (int j = 0; j < cols; j++) {
            double g = -minusG[j];
            if (x[j] < 0) {
                worst = Math.max(worst, -x[j] / xScale);
            } else if (x[j] > 0) {
                worst = Math.max(worst, Math.abs(g) / scale);
            } else {
                worst = Math.max(worst, -g / scale);
            }
        }
        return worst;
    }

    private static double norm1(double[] a, int rows, int cols) {
        double best = 0.0;
        for (int c = 0; c < cols; c++) {
            double s = 0.0;
            for (int i = 0; i < rows; i++) {
                s += Math.abs(a[i * cols + c]);
            }
            best = Math.max(best, s);
        }
        return best;
    }
}
