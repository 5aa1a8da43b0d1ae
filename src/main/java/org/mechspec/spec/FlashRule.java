package org.mechspec.spec;

/**
 * FlashAttention's tolerance rule for a backend result against the fp64 oracle:
 * {@code max|out − oracle| ≤ 2·max|naive − oracle| + atol}, where naive is a plain CPU implementation in the
 * same precision and {@code atol = chain · unitRoundoff · max(1, max|oracle|)} is the dtype's rounding noise
 * over an accumulation chain of {@code chain} terms. Any NaN or non-finite output fails (outputs are poisoned
 * with NaN before a launch, so an unwritten element fails too).
 */
public final class FlashRule {
    /** fp32's unit roundoff, 2^-24. */
    public static final double FP32_UNIT_ROUNDOFF = 0x1.0p-24;
    /** fp64's unit roundoff, 2^-53. */
    public static final double FP64_UNIT_ROUNDOFF = 0x1.0p-53;

    private FlashRule() {
    }

    /** The outcome with its figures, for the artifact. */
    public record Verdict(double maxError, double naiveError, double atol, double bound, int nonFinite) {
        /** Whether the output is within the rule's bound. */
        public boolean holds() {
            return nonFinite == 0 && maxError <= bound;
        }
    }

    /**
     * The rule on {@code out} against {@code oracle}: every element finite, and the largest error at most twice the
     * plain computation's ({@code naive}) plus {@code chain} × {@code unitRoundoff} × max(1, max|oracle|).
     */
    public static Verdict judge(double[] out, double[] oracle, double[] naive, double unitRoundoff, int chain) {
        if (out.length != oracle.length || naive.length != oracle.length) {
            throw new IllegalArgumentException("lengths differ: out " + out.length + ", oracle " + oracle.length + ", naive " + naive.length);
        }
        double maxErr = 0;
        double naiveErr = 0;
        double scale = 1;
        int nonFinite = 0;
        for (int i = 0; i < oracle.length; i++) {
            if (!Double.isFinite(out[i])) {
                nonFinite++;
                continue;
            }
            maxErr = Math.max(maxErr, Math.abs(out[i] - oracle[i]));
            naiveErr = Math.max(naiveErr, Math.abs(naive[i] - oracle[i]));
            scale = Math.max(scale, Math.abs(oracle[i]));
        }
        double atol = chain * unitRoundoff * scale;
        return new Verdict(maxErr, naiveErr, atol, 2 * naiveErr + atol, nonFinite);
    }
}
