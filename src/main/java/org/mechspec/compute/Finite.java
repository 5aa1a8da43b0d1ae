package org.mechspec.compute;

/** Input guards: a non-finite value is a caller's bug and gets a message naming where it is. */
public final class Finite {
    private Finite() {
    }

    public static void require(String name, double[] a) {
        for (int i = 0; i < a.length; i++) {
            if (!Double.isFinite(a[i])) {
                throw new IllegalArgumentException(name + "[" + i + "] is " + a[i] + ": inputs must be finite");
            }
        }
    }

    public static void require(String name, float[] a) {
        for (int i = 0; i < a.length; i++) {
            if (!Float.isFinite(a[i])) {
                throw new IllegalArgumentException(name + "[" + i + "] is " + a[i] + ": inputs must be finite");
            }
        }
    }
}
