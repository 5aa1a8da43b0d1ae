package org.mechspec.compute;

/** fp32 ⇄ fp64 array conversions (widening is exact; narrowing rounds to nearest). */
public final class FloatArrays {
    private FloatArrays() {
    }

    /** Each element as a double (exact). */
    public static double[] widen(float[] x) {
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = x[i];
        }
        return out;
    }

    /** Each element rounded to the nearest float. */
    public static float[] narrow(double[] x) {
        float[] out = new float[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = (float) x[i];
        }
        return out;
    }
}
