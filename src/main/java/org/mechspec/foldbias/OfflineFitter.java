package org.mechspec.foldbias;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The only way the mechanism fits anything (NNLS, least squares, the fold direction). Every fit is logged with
 * whether the cache was already frozen, so "no fit after freezing" is counted, not assumed.
 */
final class OfflineFitter {
    private final Solvers solvers;
    private final List<String> fits = new ArrayList<>();
    private boolean frozen;
    private int fitsAfterFreeze;

    OfflineFitter(Solvers solvers) {
        this.solvers = solvers;
    }

    double[] nnls(String what, double[] a, int rows, int cols, double[] b) {
        log(what);
        return solvers.nnls(a, rows, cols, b);
    }

    double[] leastSquares(String what, double[] x, int rows, int cols, double[] y, int yCols) {
        log(what);
        return solvers.leastSquares(x, rows, cols, y, yCols);
    }

    double[] foldDirection(double[] a, int rows, int d, double lambda) {
        log("fold direction (KKT)");
        return solvers.foldDirection(a, rows, d, lambda);
    }

    double[] foldDirectionReference(double[] a, int rows, int d, double lambda) {
        log("fold direction (closed-form reference)");
        return FoldDirection.closedForm(a, rows, d, lambda);
    }

    /** From now on every fit counts as a model call after freezing. */
    void freeze() {
        frozen = true;
    }

    int fitsAfterFreeze() {
        return fitsAfterFreeze;
    }

    List<String> log() {
        return Collections.unmodifiableList(fits);
    }

    private void log(String what) {
        fits.add((frozen ? "after freeze: " : "") + what);
        if (frozen) {
            fitsAfterFreeze++;
        }
    }
}
