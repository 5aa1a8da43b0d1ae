package org.mechspec.pnmix;

/**
 * How the protocol chooses key bit widths: from pair saliency (the mechanism), from a given mask (the random
 * baseline), or one width for every channel (the uniform baseline, which stores no mask).
 */
public record KeyPlan(Kind kind, PairMask mask, int uniformBits) {
    public enum Kind { SALIENCY, FIXED_MASK, UNIFORM }

    public static KeyPlan saliency() {
        return new KeyPlan(Kind.SALIENCY, null, 0);
    }

    public static KeyPlan fixedMask(PairMask mask) {
        return new KeyPlan(Kind.FIXED_MASK, mask, 0);
    }

    public static KeyPlan uniform(int bits) {
        if (bits < 1 || bits > 8) {
            throw new IllegalArgumentException("uniform key width must be 1..8 bits, got " + bits);
        }
        return new KeyPlan(Kind.UNIFORM, null, bits);
    }
}
