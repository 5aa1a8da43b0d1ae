package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Adam and the choice among initializations, on objectives whose answers are known in closed form. */
@Tag("oal")
class CalibrationTest {

    /** loss = Σ g_e·L_e over the lower triangle: a constant gradient g (upper entries 0). */
    record Linear(int side, double[] g) implements CalibrationObjective {
        @Override
        public double evaluate(double[] l, double[] grad) {
            double loss = 0;
            for (int e = 0; e < l.length; e++) {
                loss += g[e] * l[e];
                if (grad != null) {
                    grad[e] = g[e];
                }
            }
            return loss;
        }
    }

    /**
     * With a constant gradient the bias-corrected moments are m̂ = g and v̂ = g² at every step, so each step moves
     * L_e by −lr·g_e/(|g_e| + 1e-8): n steps move it n times that. g = 1e-8 moves exactly lr/2 per step. 1e-12 absolute.
     */
    @Test
    void adamWithAConstantGradientTakesKnownSteps() {
        double[] g = {2.0, 0, 0, -3.0, 1e-8, 0, 0.5, -1e-8, 4.0};
        double[] start = {1, 9, 9, 2, 3, 9, 4, 5, 6};
        for (int steps : new int[] {1, 3}) {
            double[] l = Calibration.adam(new Linear(3, g), start, steps);
            for (int e = 0; e < 9; e++) {
                double expected = start[e] - steps * 0.05 * g[e] / (Math.abs(g[e]) + 1e-8);
                assertThat(l[e]).as("%d steps, entry %d", steps, e).isCloseTo(expected, within(1e-12));
            }
        }
    }

    @Test
    void nonFiniteGradientIsNamed() {
        double[] g = {1, 0, Double.NaN, 1};
        assertThatThrownBy(() -> Calibration.adam(new Linear(2, g), new double[4], 1))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("gradient of L[1][0] is NaN");
    }

    /** Loss −L_00 on the selection blocks; a flat calibration objective leaves every start where it is. */
    record Flat(int side) implements CalibrationObjective {
        @Override
        public double evaluate(double[] l, double[] grad) {
            if (grad != null) {
                java.util.Arrays.fill(grad, 0.0);
            }
            return 7.0;
        }
    }

    record MinusFirst(int side) implements CalibrationObjective {
        @Override
        public double evaluate(double[] l, double[] grad) {
            return -l[0];
        }
    }

    /** Noise +1 then +2 on L_00 (G = 1: three lower entries): the third start has the lowest selection loss. */
    @Test
    void lowestSelectionLossIsKept() {
        double[][] noise = {{1, 0, 0}, {2, 0, 0}};
        Calibration.HeadFit fit = Calibration.calibrateHead(new Flat(2), new MinusFirst(2), noise);
        double t00 = QuadraticForm.taylorFactor(1)[0];
        assertThat(fit.chosen()).isEqualTo(2);
        assertThat(fit.l()[0]).isEqualTo(t00 + 2);
        assertThat(fit.selectionLosses()).containsExactly(-t00, -(t00 + 1), -(t00 + 2));
        assertThat(fit.calibrationLosses()).containsExactly(7, 7, 7);
    }

    /** Equal selection losses keep the earliest start, the Taylor point. */
    @Test
    void tiesKeepTheEarlierStart() {
        double[][] noise = {{1, 0, 0}, {2, 0, 0}};
        Calibration.HeadFit fit = Calibration.calibrateHead(new Flat(2), new Flat(2), noise);
        assertThat(fit.chosen()).isZero();
        assertThat(fit.l()).containsExactly(QuadraticForm.taylorFactor(1));
    }
}
