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
        if (rows >= cols && fullColumnRank(a)) {
            LinearSolverDense<DMatrixRMaj> qr = LinearSolverFactory_DDRM.leastSquares(rows, cols);
            if (!qr.setA(a.copy())) {
                throw new ArithmeticException("least squares: the " + rows + "x" + cols + " system could not be decomposed");
            }
            qr.solve(b, out);
        } else {
            out = minimumNorm(a, b);
        }
        double[] c = out.getData();
        for (int i = 0; i < c.length; i++) {
            if (!Double.isFinite(c[i])) {
                throw new ArithmeticException("least squares: solution element " + i + " is " + c[i]);
            }
        }
        return c;
    }

    /**
     * The minimum-norm solution through the SVD, singular values below {@link #RANK_CUT}·σ_max treated as zero. EJML's
     * pseudo-inverse cuts at about max(rows, cols)·ε·σ_max, which keeps a direction that exists only through rounding
     * (two reference queries equal to the last bits make X's rows equal but for ~1e-16): inverting it returned a
     * refit whose normal equations missed by 0.046. Dropping such a direction changes the residual by at most
     * σ·‖Y‖, within rounding.
     */
    private static DMatrixRMaj minimumNorm(DMatrixRMaj a, DMatrixRMaj b) {
        var svd = DecompositionFactory_DDRM.svd(a.numRows, a.numCols, true, true, true);
        if (!svd.decompose(a.copy())) {
            throw new ArithmeticException("least squares: the " + a.numRows + "x" + a.numCols + " system could not be decomposed");
        }
        DMatrixRMaj u = svd.getU(null, false);
        DMatrixRMaj v = svd.getV(null, false);
        double[] sigma = svd.getSingularValues();
        double max = 0.0;
        for (int i = 0; i < svd.numberOfSingularValues(); i++) {
            max = Math.max(max, sigma[i]);
        }
        DMatrixRMaj out = new DMatrixRMaj(a.numCols, b.numCols);
        for (int i = 0; i < svd.numberOfSingularValues(); i++) {
            if (!(sigma[i] > RANK_CUT * max)) {
                continue;
            }
            for (int col = 0; col < b.numCols; col++) {
                double proj = 0.0; // u_i · y
                for (int r = 0; r < a.numRows; r++) {
                    proj += u.get(r, i) * b.get(r, col);
                }
                for (int k = 0; k < a.numCols; k++) {
                    out.add(k, col, v.get(k, i) * proj / sigma[i]);
                }
            }
        }
        return out;
    }

    /** Relative size below which a singular value is rounding, not rank (about 4500 ulps of σ_max). */
    static final double RANK_CUT = 1e-12;

    /** Whether QR is safe: the column-pivoted QR rank equals the column count. */
    private static boolean fullColumnRank(DMatrixRMaj a) {
        var qrp = DecompositionFactory_DDRM.qrp(a.numRows, a.numCols);
        if (!qrp.decompose(a.copy())) {
            return false;
        }
        return qrp.getRank() == a.numCols;
    }
}
