package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import org.junit.jupiter.api.Test;

/** The stress ledger keeps, per check, the figure that came closest to failing and the input that gave it. */
class StressTest {
    @Test
    void theWorstFigureIsTheLeastMarginAndOfEqualMarginsTheNearestToItsBound() {
        assumeFalse(Stress.active(), "this build stresses the properties itself; its ledger is left alone");
        System.setProperty("mechspec.propertyExamples", "3");
        try {
            Stress.enter("demo", "ratio_below_one");
            assertThat(Stress.figure("ratio", 0.5, "<=", 1, () -> "far")).isTrue();
            assertThat(Stress.figure("ratio", 0.9, "<=", 1, () -> "close")).isTrue();
            assertThat(Stress.figure("ratio", 0.7, "<=", 1, () -> "between")).isTrue();
            Stress.leave(null);
            // Against a bound of 0 every holding figure has margin 1; the one nearest 0 is still the closest call.
            Stress.enter("demo", "excess_at_most_zero");
            Stress.figure("excess", -0.3, "<=", 0, () -> "far");
            Stress.figure("excess", -1e-9, "<=", 0, () -> "close");
            Stress.figure("excess", -0.01, "<=", 0, () -> "between");
            Stress.leave(null);
            // A count against 0 has no distance to failing: every holding example is exact, none is "closest".
            Stress.enter("demo", "no_mismatches");
            Stress.figure("mismatches", 0, "<=", 0, () -> "smallest");
            Stress.figure("mismatches", 0, "<=", 0, () -> "largest");
            Stress.leave(null);
            Stress.enter("demo", "count_and_error");
            Stress.figure("mismatches", 0, "<=", 0, () -> "counted");
            Stress.figure("error", 0.25, "<=", 1, () -> "measured");
            Stress.leave(null);
            var ledger = Stress.byPaper().get("demo");
            assertThat(ledger.get("no_mismatches").onlyExact()).isTrue();
            assertThat(ledger.get("no_mismatches").closestInput).isEmpty();
            assertThat(Stress.table(ledger)).contains("exact", "no closest input");
            assertThat(ledger.get("count_and_error").exact).isEqualTo(1);
            assertThat(ledger.get("count_and_error").closestInput).isEqualTo("measured");
            assertThat(ledger.get("count_and_error").worstMargin).isCloseTo(0.75, org.assertj.core.data.Offset.offset(1e-12));
            assertThat(ledger.get("ratio_below_one").closestInput).isEqualTo("close");
            assertThat(ledger.get("ratio_below_one").worstMargin).isCloseTo(0.1, org.assertj.core.data.Offset.offset(1e-12));
            assertThat(ledger.get("excess_at_most_zero").closestInput).isEqualTo("close");
            assertThat(ledger.get("excess_at_most_zero").worstFigure).isEqualTo("excess = -1.000e-09 ≤ 0");
        } finally {
            System.clearProperty("mechspec.propertyExamples");
            Stress.reset();
        }
    }
}
