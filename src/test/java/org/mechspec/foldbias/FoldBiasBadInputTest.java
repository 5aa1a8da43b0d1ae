package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CpuBackend;

/** Bad input gets a clear exception naming the cause, never a NaN metric. */
@Tag("fold-bias")
class FoldBiasBadInputTest {
    private final FoldBiasConfig small = new FoldBiasConfig(4, 8, 4, 6, 2, 0.5, 1e-3);

    private static FoldBiasInputs withReference(FoldBiasInputs in, double[] reference) {
        return new FoldBiasInputs(in.config(), reference, in.testQueries(), in.keys(), in.values());
    }

    @Test
    void nanInReferenceQueriesIsNamed() {
        FoldBiasInputs in = FoldBiasInputs.draw(small, 1);
        double[] q = in.referenceQueries();
        q[5] = Double.NaN;
        assertThatThrownBy(() -> withReference(in, q))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reference queries[5] is NaN");
    }

    @Test
    void infinityInTestQueriesIsNamed() {
        FoldBiasInputs in = FoldBiasInputs.draw(small, 1);
        double[] q = in.testQueries();
        q[0] = Double.NEGATIVE_INFINITY;
        assertThatThrownBy(() -> new FoldBiasInputs(small, in.referenceQueries(), q, in.keys(), in.values()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("test queries[0] is -Infinity");
    }

    @Test
    void infinityInKeysIsNamed() {
        FoldBiasInputs in = FoldBiasInputs.draw(small, 1);
        double[] k = in.keys();
        k[7] = Double.POSITIVE_INFINITY;
        assertThatThrownBy(() -> new FoldBiasInputs(small, in.referenceQueries(), in.testQueries(), k, in.values()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keys[7] is Infinity");
    }

    @Test
    void nanInKeysIsNamed() {
        FoldBiasInputs in = FoldBiasInputs.draw(small, 1);
        double[] k = in.keys();
        k[3] = Double.NaN;
        assertThatThrownBy(() -> new FoldBiasInputs(small, in.referenceQueries(), in.testQueries(), k, in.values()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keys[3] is NaN");
    }

    @Test
    void moreCompactKeysThanTokensIsRejected() {
        assertThatThrownBy(() -> new FoldBiasConfig(4, 8, 9, 6, 2, 0.5, 1e-3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("t (compact keys) = 9 exceeds n");
    }

    @Test
    void zeroDimensionIsRejected() {
        assertThatThrownBy(() -> new FoldBiasConfig(0, 8, 4, 6, 2, 0.5, 1e-3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("d (head dimension) must be positive");
    }

    @Test
    void zeroCompactKeysAndNegativeRidgeAreRejected() {
        assertThatThrownBy(() -> new FoldBiasConfig(4, 8, 0, 6, 2, 0.5, 1e-3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("t (compact keys) must be positive");
        assertThatThrownBy(() -> new FoldBiasConfig(4, 8, 4, 6, 2, 0.5, -1e-3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("lambda");
    }

    @Test
    void mismatchedShapesAreRejected() {
        FoldBiasInputs in = FoldBiasInputs.draw(small, 1);
        assertThatThrownBy(() -> new FoldBiasInputs(small, in.referenceQueries(), in.testQueries(), new double[5],
                in.values())).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keys has 5 elements");
    }

    /** Reference queries q and −q average to a = 0: the KKT system has a zero row and column. */
    @Test
    void zeroMeanQueryMakesTheKktSystemSingular() {
        FoldBiasConfig c = new FoldBiasConfig(4, 8, 4, 2, 2, 0.5, 1e-3);
        FoldBiasInputs in = FoldBiasInputs.draw(c, 3);
        double[] q = in.referenceQueries();
        for (int k = 0; k < 4; k++) {
            q[4 + k] = -q[k];
        }
        FoldBiasInputs opposite = withReference(in, q);
        assertThatThrownBy(() -> new FoldBias(CpuBackend.INSTANCE).run(opposite))
                .isInstanceOf(ArithmeticException.class).hasMessageContaining("singular KKT system");
    }

    /** λ = 0 with fewer reference queries than dimensions: AᵀA is rank-deficient, so is the KKT matrix. */
    @Test
    void rankDeficientUnregularizedKktIsSingular() {
        FoldBiasConfig c = new FoldBiasConfig(8, 16, 4, 2, 2, 0.5, 0.0);
        FoldBiasInputs in = FoldBiasInputs.draw(c, 5);
        assertThatThrownBy(() -> new FoldBias(CpuBackend.INSTANCE).run(in))
                .isInstanceOf(ArithmeticException.class).hasMessageContaining("singular KKT system");
    }
}
