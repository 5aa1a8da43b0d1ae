package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;

/** Hand-checkable cases pinning the helpers the checks rest on: KeySelection and the test's own definitions. */
@Tag("fold-bias")
class DefinitionsTest {

    /** Scores (max over the two queries) 0.5, 0.5, 0.25, 0.5, 0.1: the t = 2 top keys are 0 and 1 (ties to lower). */
    @Test
    void selectionKeepsTopScoresWithTiesToTheLowerIndex() {
        double[] weights = {
            0.5, 0.1, 0.25, 0.05, 0.1,
            0.1, 0.5, 0.1, 0.5, 0.0};
        assertThat(KeySelection.topByMaxWeight(weights, 2, 5, 2)).containsExactly(0, 1);
        assertThat(KeySelection.topByMaxWeight(weights, 2, 5, 3)).containsExactly(0, 1, 3);
        assertThat(KeySelection.topByMaxWeight(weights, 2, 5, 4)).containsExactly(0, 1, 2, 3);
        assertThat(SelectionCheck.topByScore(new double[] {0.5, 0.5, 0.25, 0.5, 0.1}, 3))
                .containsExactly(true, true, false, true, false);
    }

    @Test
    void nearestHalfRoundsToNearestWithTiesToEven() {
        double ulp = 0x1p-10; // fp16 spacing in [1, 2)
        assertThat(Definitions.nearestHalf(1.0)).isEqualTo(1.0);
        assertThat(Definitions.nearestHalf(1.0 + ulp / 2)).isEqualTo(1.0); // tie: even mantissa 0
        assertThat(Definitions.nearestHalf(1.0 + 1.5 * ulp)).isEqualTo(1.0 + 2 * ulp); // tie: even mantissa 2
        assertThat(Definitions.nearestHalf(1.0 + 0.51 * ulp)).isEqualTo(1.0 + ulp);
        assertThat(Definitions.nearestHalf(-3.0 - 0.49 * 2 * ulp)).isEqualTo(-3.0);
        assertThat(Definitions.nearestHalf(65504.0)).isEqualTo(65504.0);
        assertThat(Definitions.nearestHalf(65519.99)).isEqualTo(65504.0);
        assertThat(Definitions.nearestHalf(65520.0)).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(Definitions.nearestHalf(0x1p-24)).isEqualTo(0x1p-24); // smallest subnormal
        assertThat(Definitions.nearestHalf(0x1p-25)).isEqualTo(0.0); // tie with 0: even
        assertThat(Definitions.nearestHalf(3 * 0x1p-25)).isEqualTo(0x1p-23); // tie: even mantissa 2
        assertThat(Double.doubleToRawLongBits(Definitions.nearestHalf(-0x1p-30)))
                .isEqualTo(Double.doubleToRawLongBits(-0.0));
    }

    /** Two independent implementations agree on values across the fp16 range, subnormals included. */
    @Test
    void nearestHalfAgreesWithTheComputeRounding() {
        Rng rng = new Rng(7);
        for (int i = 0; i < 100_000; i++) {
            double x = (rng.uniform() - 0.5) * StrictMath.pow(2.0, -30 + 46 * rng.uniform());
            assertThat(Definitions.nearestHalf(x)).as("x = %s", x).isEqualTo(HalfFloat.roundToHalf(x));
        }
    }

    /** Logits 0 and ln 3 give weights 1/4 and 3/4; the output mixes the values accordingly. */
    @Test
    void attentionByDefinitionOnAHandCase() {
        double ln3 = StrictMath.log(3);
        double[] q = {1.0};
        double[] k = {0.0, ln3}; // d = 1: scale 1
        double[] w = Definitions.weights(q, 1, k, 2, 1, null);
        assertThat(w[0]).isCloseTo(0.25, within(1e-15));
        assertThat(w[1]).isCloseTo(0.75, within(1e-15));
        double[] out = Definitions.mix(w, 1, 2, new double[] {4.0, 8.0}, 1);
        assertThat(out[0]).isCloseTo(7.0, within(1e-14));
        double[] biased = Definitions.weights(q, 1, k, 2, 1, new double[] {ln3, 0.0});
        assertThat(biased[0]).isCloseTo(0.5, within(1e-15));
    }
}
