package org.mechspec.oal;


/**
 * The runtime positivity guard of grouped-quadratic attention: a normalizer Σ_{j≤t} sim(q_t, k_j) that is not a
 * positive finite number means the coefficients or activations are broken, never a value to divide by.
 */
public final class NonPositiveDenominatorException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    private NonPositiveDenominatorException(String message) {
        super(message);
    }

    /** Throws at the first denominator ([batch, seqLen, heads]) that is non-finite or ≤ 0. */
    public static void requirePositive(QuadraticAttentionShape s, double[] den) {
        for (int i = 0; i < den.length; i++) {
            if (!(den[i] > 0) || Double.isInfinite(den[i])) {
                throw at(s, i, den[i]);
            }
        }
    }

    public static void requirePositive(QuadraticAttentionShape s, float[] den) {
        for (int i = 0; i < den.length; i++) {
            if (!(den[i] > 0) || Float.isInfinite(den[i])) {
                throw at(s, i, den[i]);
            }
        }
    }

    /** The guard as an outside implementation reported it (its message names where). */
    static NonPositiveDenominatorException reported(String message) {
        return new NonPositiveDenominatorException(message);
    }

    private static NonPositiveDenominatorException at(QuadraticAttentionShape s, int i, double value) {
        int h = i % s.heads();
        int t = (i / s.heads()) % s.seqLen();
        int b = i / (s.heads() * s.seqLen());
        return new NonPositiveDenominatorException("grouped-quadratic attention denominator at batch " + b + ", token " + t
                + ", head " + h + " is " + value + ": it must be positive and finite (sim = ε + [1,z]·M·[1,z]ᵀ with"
                + " M = L·Lᵀ cannot give this; check the coefficients and the activations)");
    }
}
