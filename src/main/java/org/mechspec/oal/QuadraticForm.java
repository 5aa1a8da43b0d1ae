package org.mechspec.oal;

import org.ejml.data.DMatrixRMaj;
import org.ejml.dense.row.factory.DecompositionFactory_DDRM;
import org.ejml.interfaces.decomposition.CholeskyDecomposition_F64;

/**
 * The coefficients of one head's grouped quadratic kernel: a lower-triangular (G+1)×(G+1) factor L (row-major),
 * M = L·Lᵀ, so sim = ε + [1, z]·M·[1, z]ᵀ ≥ ε for every L. Equivalently c0 = M00 + ε, B_g = 2·M0g, C_gh = M_gh.
 */
final class QuadraticForm {
    /** Ridge added before the Cholesky factorization of the (singular) Taylor matrix. */
    static final double TAYLOR_RIDGE = 1e-6;

    private QuadraticForm() {
    }

    /**
     * The second-order Taylor expansion of exp(Σ_g z_g) as a quadratic form: 1 + Σ z_g + ½(Σ z_g)², i.e. c0 = 1,
     * B = 1, C = ½ (M00 = 1, M0g = ½, M_gh = ½).
     */
    static double[] taylorMatrix(int groups) {
        int side = groups + 1;
        double[] m = new double[side * side];
        for (int a = 0; a < side; a++) {
            for (int b = 0; b < side; b++) {
                m[a * side + b] = a == 0 && b == 0 ? 1.0 : 0.5;
            }
        }
        return m;
    }

    /** L = chol(M_taylor + 1e-6·I). */
    static double[] taylorFactor(int groups) {
        int side = groups + 1;
        double[] m = taylorMatrix(groups);
        for (int a = 0; a < side; a++) {
            m[a * side + a] += TAYLOR_RIDGE;
        }
        return cholesky(m, side);
    }

    /** The lower Cholesky factor of a symmetric positive-definite matrix (EJML). */
    static double[] cholesky(double[] m, int side) {
        DMatrixRMaj a = new DMatrixRMaj(side, side, true, m.clone());
        CholeskyDecomposition_F64<DMatrixRMaj> chol = DecompositionFactory_DDRM.chol(side, true);
        if (!chol.decompose(a)) {
            throw new IllegalArgumentException("matrix is not positive definite: no Cholesky factor");
        }
        DMatrixRMaj l = chol.getT(null);
        double[] out = new double[side * side];
        for (int r = 0; r < side; r++) {
            for (int c = 0; c <= r; c++) {
                out[r * side + c] = l.get(r, c);
            }
        }
        return out;
    }

    /** M = L·Lᵀ (only L's lower triangle is read). */
    static double[] gram(double[] l, int side) {
        double[] m = new double[side * side];
        for (int a = 0; a < side; a++) {
            for (int b = 0; b < side; b++) {
                double sum = 0.0;
                for (int c = 0; c <= Math.min(a, b); c++) {
                    sum += l[a * side + c] * l[b * side + c];
                }
                m[a * side + b] = sum;
            }
        }
        return m;
    }

    /** Number of free entries of L: the lower triangle. */
    static int lowerEntries(int side) {
        return side * (side + 1) / 2;
    }

    /** M of every head, concatenated ([heads, side, side]) as the kernels take it. */
    static double[] gramAll(double[][] lPerHead, int side) {
        double[] out = new double[lPerHead.length * side * side];
        for (int h = 0; h < lPerHead.length; h++) {
            System.arraycopy(gram(lPerHead[h], side), 0, out, h * side * side, side * side);
        }
        return out;
    }
}
