package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** HeadObjective's guards, its gradient buffer and its finite-difference check, on small random samples. */
@Tag("oal")
class HeadObjectiveTest {

    private static LayerSamples samples() {
        return TinyOal.samples(11, 1, 4, 2, 1, 4, 0.8);
    }

    @Test
    void groupIdsMustCoverTheHeadDimension() {
        assertThatThrownBy(() -> new HeadObjective(samples(), 0, new int[3], 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("3 group ids for head dimension 4");
    }

    /** L00 = 1e200 and the rest 0 make M00 = +∞ and every similarity +∞: a named error, not a NaN loss. */
    @Test
    void infiniteDenominatorIsAClearError() {
        HeadObjective o = new HeadObjective(samples(), 0, new int[] {0, 1, 0, 1}, 2);
        double[] l = new double[9];
        l[0] = 1e200;
        assertThatThrownBy(() -> o.loss(l)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("calibration denominator at block 0, token 0 is Infinity");
    }

    /** Whatever the buffer held before, the upper triangle of the gradient comes back zero. */
    @Test
    void gradientUpperTriangleIsZeroedWhateverTheBufferHeld() {
        HeadObjective o = new HeadObjective(samples(), 1, new int[] {0, 1, 1, 0}, 2);
        double[] grad = new double[9];
        java.util.Arrays.fill(grad, 5.0);
        o.evaluate(QuadraticForm.taylorFactor(2), grad);
        assertThat(new double[] {grad[1], grad[2], grad[5]}).containsExactly(0, 0, 0);
        assertThat(grad[0]).isNotEqualTo(5.0);
    }

    /**
     * With the planted wrong gradient the error is O(1); recomputed here from its definition (central differences
     * with step h over every lower entry, max|numeric − analytic| / max|analytic|), to 1e-12 relative.
     */
    @Test
    void gradientRelativeErrorIsItsDefinition() {
        CalibrationObjective o = BrokenOal.halvedGradient(new HeadObjective(samples(), 0, new int[] {0, 1, 0, 1}, 2));
        double[] l = Calibration.perturbed(QuadraticForm.taylorFactor(2), 3, new double[] {0.1, -0.2, 0.3, 0.05, -0.1, 0.2});
        double h = 1e-5;
        double[] analytic = new double[9];
        o.evaluate(l, analytic);
        double maxDiff = 0;
        double maxAnalytic = 0;
        for (int e : new int[] {0, 3, 4, 6, 7, 8}) { // the lower triangle of a 3×3 row-major matrix
            double[] plus = l.clone();
            double[] minus = l.clone();
            plus[e] += h;
            minus[e] -= h;
            double numeric = (o.loss(plus) - o.loss(minus)) / (2 * h);
            maxDiff = Math.max(maxDiff, Math.abs(numeric - analytic[e]));
            maxAnalytic = Math.max(maxAnalytic, Math.abs(analytic[e]));
        }
        double expected = maxDiff / maxAnalytic;
        assertThat(expected).isGreaterThan(1e-3);
        assertThat(ObjectiveGradientCheck.relativeError(o, l, h)).isCloseTo(expected, within(1e-12 * expected));
    }
}
