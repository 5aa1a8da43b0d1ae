package org.mechspec.oal;

/**
 * What calibration minimizes: a loss of one head's factor L ((G+1)×(G+1), row-major, lower triangle free) and its
 * gradient. {@link HeadObjective} is the protocol's; Adam is written against this interface.
 */
interface CalibrationObjective {
    /** G + 1. */
    int side();

    /** The loss; when {@code grad} is not null, ∂loss/∂L (lower triangle; the upper stays zero) is written to it. */
    double evaluate(double[] l, double[] grad);

    default double loss(double[] l) {
        return evaluate(l, null);
    }
}
