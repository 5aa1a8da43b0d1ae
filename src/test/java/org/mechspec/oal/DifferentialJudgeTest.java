package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.spec.Breaks;

/**
 * The differential judge reads the form it was asked for: a device whose dense form alone is off by 1e-2 in one
 * output element fails the dense verdict and passes the recurrent one, and the other way round, in both precisions.
 */
@Tag("oal")
class DifferentialJudgeTest {
    private static final double OFF = 1e-2;

    /** The CPU twin with one form's first output element moved by {@link #OFF}. */
    private record OneFormOff(boolean recurrentOff) implements GroupedQuadraticAttentionOps {
        private static final GroupedQuadraticAttentionOps CPU = CpuGroupedQuadraticAttention.INSTANCE;

        public String name() {
            return "one-form-off";
        }

        public double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] g, double[] m) {
            return off(CPU.dense(s, q, k, v, g, m), !recurrentOff);
        }

        public float[] dense(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] g, float[] m) {
            return off(CPU.dense(s, q, k, v, g, m), !recurrentOff);
        }

        public double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] g, double[] m) {
            return off(CPU.recurrent(s, q, k, v, g, m), recurrentOff);
        }

        public float[] recurrent(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] g, float[] m) {
            return off(CPU.recurrent(s, q, k, v, g, m), recurrentOff);
        }

        private static double[] off(double[] x, boolean broken) {
            if (broken) {
                x[0] += OFF;
            }
            return x;
        }

        private static float[] off(float[] x, boolean broken) {
            if (broken) {
                x[0] += (float) OFF;
            }
            return x;
        }
    }

    @Test
    @Breaks(paper = "oal", check = "oal_dense_cuda_flash_rule")
    @Breaks(paper = "oal", check = "oal_recurrent_cuda_flash_rule")
    void eachVerdictJudgesItsOwnForm() {
        OalChecks.DifferentialCase c = OalChecks.differentialCase(5, 1, 7, 2, 1, 4);
        for (boolean fp64 : new boolean[] {true, false}) {
            assertThat(OalChecks.differential(CpuGroupedQuadraticAttention.INSTANCE, c, false, fp64).holds()).isTrue();
            assertThat(OalChecks.differential(CpuGroupedQuadraticAttention.INSTANCE, c, true, fp64).holds()).isTrue();
            assertThat(OalChecks.differential(new OneFormOff(false), c, false, fp64).holds()).as("dense off, fp64 %s", fp64).isFalse();
            assertThat(OalChecks.differential(new OneFormOff(false), c, true, fp64).holds()).as("dense off, fp64 %s", fp64).isTrue();
            assertThat(OalChecks.differential(new OneFormOff(true), c, true, fp64).holds()).as("recurrent off, fp64 %s", fp64).isFalse();
            assertThat(OalChecks.differential(new OneFormOff(true), c, false, fp64).holds()).as("recurrent off, fp64 %s", fp64).isTrue();
        }
    }
}
