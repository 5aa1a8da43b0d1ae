package org.mechspec.foldbias;

/**
 * keys_rounded_to_nearest_fp16: every element of K_h is K_f rounded to the nearest fp16 value, ties to even,
 * by {@link Definitions#nearestHalf} (the existing check only asks that K_h lies on the fp16 grid and differs from K_f).
 */
final class RoundingCheck {
    private RoundingCheck() {
    }

    /** Elements of the rounded keys that are not the nearest fp16 value of the folded keys (±0 count as equal). */
    static long offNearest(double[] folded, double[] rounded) {
        long count = 0;
        for (int i = 0; i < folded.length; i++) {
            count += rounded[i] == Definitions.nearestHalf(folded[i]) ? 0 : 1;
        }
        return count;
    }
}
