package org.mechspec.pnmix;

/**
 * Rotary position embedding in fp64: pair i of a head, in the given layout, is rotated by position·ω_i with
 * ω_i = θ^(−2i/d). A rotation keeps each pair's norm, which is why saliency measured on prefill pairs stays
 * valid for every later position.
 */
public final class PairLayoutRope {
    private PairLayoutRope() {
    }

    /** Rotates {@code heads} consecutive head vectors of {@code x} (from {@code offset}) in place. */
    public static void apply(double[] x, int offset, int heads, int headDim, int position, double theta, PairLayout layout) {
        for (int i = 0; i < headDim / 2; i++) {
            double omega = StrictMath.pow(theta, -2.0 * i / headDim);
            double angle = position * omega;
            double cos = StrictMath.cos(angle);
            double sin = StrictMath.sin(angle);
            for (int h = 0; h < heads; h++) {
                int a = offset + h * headDim + layout.first(i, headDim);
                int b = offset + h * headDim + layout.second(i, headDim);
                double x0 = x[a];
                double x1 = x[b];
                x[a] = x0 * cos - x1 * sin;
                x[b] = x0 * sin + x1 * cos;
            }
        }
    }

    /** Norm of pair p of head h in a row of head vectors. */
    public static double pairNorm(double[] x, int offset, int head, int headDim, int pair, PairLayout layout) {
        double a = x[offset + head * headDim + layout.first(pair, headDim)];
        double b = x[offset + head * headDim + layout.second(pair, headDim)];
        return StrictMath.sqrt(a * a + b * b);
    }
}
