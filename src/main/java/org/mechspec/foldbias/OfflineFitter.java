package org.mechspec.foldbias;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The only way the mechanism fits anything (NNLS, least squares, the fold direction). Every fit is logged with
 * whether the cache was already frozen, so "no fit after freezing" is counted, not assumed.
 */
final class OfflineFitter {
    private final List<String> fits = new ArrayList<>();
    private boolean frozen;
    private int fitsAfterFreeze;

    double[] nnls(String what, double[] a, int rows, int cols, double[] b) {
        log(what);
        return Nnls.solve(a, rows, cols, b);
    }

    double[] leastSquares(String what, double[] x, int rows, int cols, double[] y, int yCols) {
        log(what);
        return LeastSquares.solve(x, rows, cols, y, yCols);
    }

    double[] foldDirection(double[] a, int rows, int d, double lambda, Mutant mutant) {
        log("fold direction (KKT)");
        return FoldDirection.kkt(a, rows, d, lambda, mutant);
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
