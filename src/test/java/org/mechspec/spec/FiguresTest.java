package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Figures.maxAbsDifference: a wrong shape or a NaN never reads as a small error. */
@Tag("platform")
class FiguresTest {
    @Test
    void theLargestDifferenceAndInfinityForAWrongLengthOrANaN() {
        assertThat(Figures.maxAbsDifference(new double[] {1, 2, 3}, new double[] {1, 2.5, 2})).isEqualTo(1.0);
        assertThat(Figures.maxAbsDifference(new double[0], new double[0])).isZero();
        assertThat(Figures.maxAbsDifference(new double[] {1, 2}, new double[] {1, 2, 3})).isInfinite();
        assertThat(Figures.maxAbsDifference(new double[] {Double.NaN, 2}, new double[] {1, 2})).isInfinite();
        assertThat(Figures.maxAbsDifference(new double[] {1, Double.NaN}, new double[] {1, 2})).isInfinite();
        assertThat(Figures.maxAbsDifference(new double[] {1, 2}, new double[] {Double.POSITIVE_INFINITY, 2})).isInfinite();
    }
}
