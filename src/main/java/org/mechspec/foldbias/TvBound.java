package org.mechspec.foldbias;

/**
 * The bound on TV(p, p′) that {@link FoldBias} multiplies by the value range, from the biased weights p and the
 * logit difference δ alone. The mechanism uses {@link OutputBound#tv}; the tests put other formulas here.
 */
@FunctionalInterface
interface TvBound {
    double tv(double[] p, double[] delta);
}
