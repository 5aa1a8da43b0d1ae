package org.mechspec.foldbias;

import org.mechspec.compute.Backend;
import org.mechspec.worker.WorkerBackend;

/**
 * The three fits the mechanism makes (protocols.md, fold-bias). {@link #EXACT} is the mechanism's; the seam lets a test hand in
 * a solver that solves a different problem and show the checks notice.
 */
interface Solvers {
    /** argmin_{w ≥ 0} ‖A·w − b‖, A [rows, cols]. */
    double[] nnls(double[] a, int rows, int cols, double[] b);

    /** argmin_W ‖X·W − Y‖_F, X [rows, cols] of full column rank, Y [rows, yCols]. */
    double[] leastSquares(double[] x, int rows, int cols, double[] y, int yCols);

    /** The fold direction u of {@link FoldDirection#kkt}. */
    double[] foldDirection(double[] a, int rows, int d, double lambda);

    /** The backend's solvers: an outside implementation's where it serves them, else {@link #EXACT}. */
    static Solvers on(Backend backend) {
        return backend instanceof WorkerBackend w ? WorkerFoldBias.solvers(w.implementation()) : EXACT;
    }

    Solvers EXACT = new Solvers() {
        @Override
        public double[] nnls(double[] a, int rows, int cols, double[] b) {
            return Nnls.solve(a, rows, cols, b);
        }

        @Override
        public double[] leastSquares(double[] x, int rows, int cols, double[] y, int yCols) {
            return LeastSquares.solve(x, rows, cols, y, yCols);
        }

        @Override
        public double[] foldDirection(double[] a, int rows, int d, double lambda) {
            return FoldDirection.kkt(a, rows, d, lambda);
        }
    };
}
