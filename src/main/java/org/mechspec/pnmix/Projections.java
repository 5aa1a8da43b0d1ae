package org.mechspec.pnmix;

/**
 * The layer's q, k, v for a token sequence, row-major [token][head·headDim]. {@code q}, {@code k}, {@code v}
 * are the fp16-rounded truth; the fp64 arrays before and after RoPE are kept for the pair-norm contract.
 */
public record Projections(int tokens, int queryHeads, int kvHeads, int headDim, double[] qPreRope, double[] kPreRope,
                          double[] qRope, double[] kRope, double[] q, double[] k, double[] v) {

    public int qWidth() {
        return queryHeads * headDim;
    }

    public int kvWidth() {
        return kvHeads * headDim;
    }

    /** Row {@code t} of a [token][width] array. */
    public static double[] row(double[] a, int width, int t) {
        double[] r = new double[width];
        System.arraycopy(a, t * width, r, 0, width);
        return r;
    }
}
