package org.mechspec.foldbias;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.dense.row.factory.LinearSolverFactory_DDRM;
import org.ejml.interfaces.linsol.LinearSolverDense;

/**
 * Least squares X·C = Y (fp64, EJML). Tall full-rank systems go through Householder QR; wide or
 * rank-deficient ones through the SVD pseudo-inverse (the minimum-norm solution). Either way the normal
 * equations Xᵀ(X·C − Y) = 0 hold to rounding.
 */
final class LeastSquares {
    private LeastSquares() {
    }

    /** C [cols, yCols] minimizing ‖X·C − Y‖_F for X [rows, cols], Y [rows, yCols]. */
    static double[] solve(double[] x, int rows, int cols, double[] y, int yCols) {
        DMatrixRMaj a = DMatrixRMaj.wrap(rows, cols, x.clone());
        DMatrixRMaj b = DMatrixRMaj.wrap(rows, yCols, y.clone());
        DMatrixRMaj out = new DMatrixRMaj(cols, yCols);
        LinearSolverDense<DMatrixRMaj> solver = rows >= cols && fullColumnRank(a)
                ? LinearSolverFactory_DDRM.leastSquares(rows, cols)
                : LinearSolverFactory_DDRM.pseudoInverse(true);
        if (!solver.setA(a.copy())) {
            throw new ArithmeticException("least squares: the " + rows + "x" + cols + " system could not be decomposed");
        }
        solver.solve(b, out);
        double[] c = out.getData();
        for (int i = 0; i < c.length; i++) {
            if (!Double.isFinite(c[i])) {
                throw new ArithmeticException("least squares: solution element " + i + " is " + c[i]);
            }
        }
        return c;
    }

    /** Whether QR is safe: the column-pivoted QR rank equals the column count. */
    private static boolean fullColumnRank(DMatrixRMaj a) {
        var qrp = DecompositionFactory_DDRM.qrp(a.numRows, a.numCols);
        if (!qrp.decompose(a.copy())) {
            return false;
        }
        return qrp.getRank() == a.numCols;
    }
}
