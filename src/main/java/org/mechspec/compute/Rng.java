package org.mechspec.compute;

/**
 * The pinned random stream of rng.md: SplitMix64 with state = seed, uniforms from the top 53 bits,
 * normals by Box–Muller with StrictMath, Fisher–Yates from the end. Anyone can regenerate the same
 * inputs in any language from that description, so nothing here may change.
 */
public final class Rng {
    private static final double TWO_POW_MINUS_53 = 0x1.0p-53;

    private long state;
    private double spareNormal;
    private boolean hasSpare;

    /** The stream of {@code seed} (rng.md pins its first values). */
    public Rng(long seed) {
        this.state = seed;
    }

    /** Next raw 64-bit output (read it as unsigned). */
    public long next() {
        state += 0x9E3779B97F4A7C15L;
        long z = state;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Uniform in [0, 1). */
    public double uniform() {
        return (next() >>> 11) * TWO_POW_MINUS_53;
    }

    /** Standard normal; the pair's second value is returned by the next call. */
    public double normal() {
        if (hasSpare) {
            hasSpare = false;
            return spareNormal;
        }
        double u1 = uniform();
        double u2 = uniform();
        if (u1 == 0.0) {
            u1 = TWO_POW_MINUS_53;
        }
        double r = StrictMath.sqrt(-2.0 * StrictMath.log(u1));
        double angle = 2.0 * StrictMath.PI * u2;
        spareNormal = r * StrictMath.sin(angle);
        hasSpare = true;
        return r * StrictMath.cos(angle);
    }

    /** {@code count} draws of N(mean, std²), in order (fill matrices row-major from it). */
    public double[] normals(int count, double mean, double std) {
        double[] out = new double[count];
        for (int i = 0; i < count; i++) {
            out[i] = mean + std * normal();
        }
        return out;
    }

    /** Fisher–Yates from the end: for i = n−1 … 1, j = ⌊u·(i+1)⌋, swap i and j. */
    public void shuffle(int[] a) {
        for (int i = a.length - 1; i >= 1; i--) {
            int j = (int) (uniform() * (i + 1));
            int t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }

    /** The identity permutation of 0..n−1, shuffled. */
    public int[] permutation(int n) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
        }
        shuffle(a);
        return a;
    }
}
