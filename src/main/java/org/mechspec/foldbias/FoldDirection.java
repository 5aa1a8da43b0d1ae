package org.mechspec.foldbias;

import java.util.Arrays;
import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.NormOps_DDRM;
import org.ejml.dense.row.factory.LinearSolverFactory_DDRM;
import org.ejml.interfaces.linsol.LinearSolverDense;

/**
 * The fold direction u: minimize Σ_i (A_i·u − 1)² + λ‖u‖² subject to mean_i(A_i·u) = 1, with A the reference
 * queries scaled by 1/√d. Solved through its KKT system (LU); the reference is the closed form
 * u = H⁻¹a / (aᵀH⁻¹a), H = AᵀA + λI, a = mean row of A, through a Cholesky factor of H.
 */
final class FoldDirection {
    /** A KKT matrix with a 2-norm condition number beyond this is treated as singular. */
    static final double MAX_CONDITION = 1e12;

    private FoldDirection() {
    }

    /** u from [[2(AᵀA + λI), a], [aᵀ, 0]]·[u; ν] = [2Aᵀ1; 1]. */
    static double[] kkt(double[] a, int rows, int d, double lambda) {
        double[] gram = Dense.transposedTimesMatrix(a, rows, d, a, d);
        double[] mean = meanRow(a, rows, d);
        double[] columnSums = Dense.transposedTimes(a, rows, d, ones(rows));
        int size = d + 1;
        DMatrixRMaj m = kktMatrix(gram, mean, d, lambda);
        DMatrixRMaj rhs = new DMatrixRMaj(size, 1);
        for (int r = 0; r < d; r++) {
            rhs.set(r, 0, 2 * columnSums[r]);
        }
        rhs.set(d, 0, 1.0);
        double condition = NormOps_DDRM.conditionP2(m.copy());
        if (!(condition <= MAX_CONDITION)) {
            throw new ArithmeticException("singular KKT system for the fold direction (2-norm condition number "
                    + condition + " > " + MAX_CONDITION + "; mean reference query |a| = " + Dense.norm(mean)
                    + ", lambda = " + lambda + ")");
        }
        LinearSolverDense<DMatrixRMaj> lu = LinearSolverFactory_DDRM.lu(size);
        if (!lu.setA(m.copy())) {
            throw new ArithmeticException("singular KKT system for the fold direction: LU decomposition failed");
        }
        DMatrixRMaj solution = new DMatrixRMaj(size, 1);
        lu.solve(rhs, solution);
        double[] u = new double[d];
        System.arraycopy(solution.getData(), 0, u, 0, d);
        requireFinite("KKT solution u", u);
        return u;
    }

    /** [[2(AᵀA + λI), a], [aᵀ, 0]] for the given Gram matrix AᵀA and mean row a. */
    static DMatrixRMaj kktMatrix(double[] gram, double[] mean, int d, double lambda) {
        DMatrixRMaj m = new DMatrixRMaj(d + 1, d + 1);
        for (int r = 0; r < d; r++) {
            for (int c = 0; c < d; c++) {
                m.set(r, c, 2 * gram[r * d + c]);
            }
            m.add(r, r, 2 * lambda);
            m.set(r, d, mean[r]);
            m.set(d, r, mean[r]);
        }
        return m;
    }

    /** The KKT matrix of reference queries A [rows, d]. */
    static DMatrixRMaj kktMatrix(double[] a, int rows, int d, double lambda) {
        return kktMatrix(Dense.transposedTimesMatrix(a, rows, d, a, d), meanRow(a, rows, d), d, lambda);
    }

    /** The closed form u = H⁻¹a / (aᵀH⁻¹a) through a Cholesky factor of H = AᵀA + λI. */
    static double[] closedForm(double[] a, int rows, int d, double lambda) {
        double[] gram = Dense.transposedTimesMatrix(a, rows, d, a, d);
        double[] mean = meanRow(a, rows, d);
        double[] hInvA = solveRidge(gram, d, lambda, mean);
        double denominator = 0.0;
        for (int c = 0; c < d; c++) {
            denominator += mean[c] * hInvA[c];
        }
        if (!(denominator > 0) || !Double.isFinite(denominator)) {
            throw new ArithmeticException("singular KKT system for the fold direction: aᵀH⁻¹a = " + denominator
                    + " (the mean reference query is zero)");
        }
        double[] u = new double[d];
        for (int c = 0; c < d; c++) {
            u[c] = hInvA[c] / denominator;
        }
        requireFinite("closed-form u", u);
        return u;
    }

    /** x with (AᵀA + λI)·x = rhs, by Cholesky. */
    static double[] solveRidge(double[] gram, int d, double lambda, double[] rhs) {
        DMatrixRMaj h = DMatrixRMaj.wrap(d, d, gram.clone());
        for (int c = 0; c < d; c++) {
            h.add(c, c, lambda);
        }
        LinearSolverDense<DMatrixRMaj> chol = LinearSolverFactory_DDRM.chol(d);
        if (!chol.setA(h)) {
            throw new ArithmeticException("singular KKT system for the fold direction: H = AᵀA + λI (lambda = "
                    + lambda + ") is not positive definite");
        }
        DMatrixRMaj x = new DMatrixRMaj(d, 1);
        chol.solve(DMatrixRMaj.wrap(d, 1, rhs.clone()), x);
        return x.getData();
    }

    static double[] meanRow(double[] a, int rows, int d) {
        double[] mean = new double[d];
        for (int i = 0; i < rows; i++) {
            for (int c = 0; c < d; c++) {
                mean[c] += a[i * d + c];
            }
        }
        for (int c = 0; c < d; c++) {
            mean[c] /= rows;
        }
        return mean;
    }

    private static double[] ones(int n) {
        double[] o = new double[n];
        Arrays.fill(o, 1.0);
        return o;
    }

    private static void requireFinite(String name, double[] x) {
        for (int i = 0; i < x.length; i++) {
            if (!Double.isFinite(x[i])) {
                throw new ArithmeticException("singular KKT system for the fold direction: " + name + "[" + i + "] is " + x[i]);
            }
        }
    }
}
