package org.mechspec.compute;

/** Input guards: a non-finite value is a caller's bug and gets a message naming where it is. */
public final class Finite {
    private Finite() {
    }

    /** An {@link IllegalArgumentException} naming {@code name} and the first NaN or infinite element of {@code a}. */
    public static void require(String name, double[] a) {
        for (int i = 0; i < a.length; i++) {
            if (!Double.isFinite(a[i])) {
                throw new IllegalArgumentException(name + "[" + i + "] is " + a[i] + ": inputs must be finite");
            }
        }
    }

    /** An {@link IllegalArgumentException} naming {@code name} and the first NaN or infinite element of {@code a}. */
    public static void require(String name, float[] a) {
        for (int i = 0; i < a.length; i++) {
            if (!Float.isFinite(a[i])) {
                throw new IllegalArgumentException(name + "[" + i + "] is " + a[i] + ": inputs must be finite");
            }
        }
    }
}
