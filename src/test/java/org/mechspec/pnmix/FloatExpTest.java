package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** FloatExp against its definition, (float) StrictMath.exp, bit for bit. */
class FloatExpTest {

    private static long mismatches(float from, float to, int stride) {
        long bad = 0;
        // Negative floats: bits grow with magnitude from −0 (0x80000000) on.
        for (int b = Float.floatToRawIntBits(from); b <= Float.floatToRawIntBits(to) && b < 0; b += stride) {
            float x = Float.intBitsToFloat(b);
            if (Float.floatToRawIntBits(FloatExp.exp(x)) != Float.floatToRawIntBits((float) StrictMath.exp(x))) {
                bad++;
            }
        }
        return bad;
    }

    @Test
    void everyFloatBetweenMinus104AndZeroOnAStrideOf61GivesStrictMathsBits() {
        // 18 million arguments spread over the softmax's whole range, tiny ones included.
        assertThat(mismatches(-0f, -104f, 61)).isZero();
    }

    @Test
    void randomArgumentsGiveStrictMathsBits() {
        SplittableRandom rng = new SplittableRandom(41);
        for (int i = 0; i < 2_000_000; i++) {
            float x = (float) (i % 2 == 0 ? -30 * rng.nextDouble() : -rng.nextDouble() * 1e-3);
            assertThat(FloatExp.exp(x)).as("exp(%s)", x).isEqualTo((float) StrictMath.exp(x));
        }
    }

    @Test
    void argumentsOutsideTheFastRangeAreStrictMathsToo() {
        float[] edges = {0f, -0f, Float.MIN_VALUE, -Float.MIN_VALUE, 1f, 88.7f, 89f, -103.9f, -104f, -104.1f, -150f,
            -1e30f, Float.NEGATIVE_INFINITY, Float.POSITIVE_INFINITY, Float.NaN};
        for (float x : edges) {
            assertThat(Float.floatToRawIntBits(FloatExp.exp(x))).as("exp(%s)", x)
                    .isEqualTo(Float.floatToRawIntBits((float) StrictMath.exp(x)));
        }
    }

    @Test
    void theComparisonSeesALastBitDifference() {
        // The check above compares raw bits: one ulp off is a mismatch.
        float x = -1.5f;
        float off = Math.nextUp((float) StrictMath.exp(x));
        assertThat(Float.floatToRawIntBits(off)).isNotEqualTo(Float.floatToRawIntBits(FloatExp.exp(x)));
    }
}
