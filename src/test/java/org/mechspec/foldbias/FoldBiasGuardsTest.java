package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CpuBackend;

/**
 * The argument, shape and finiteness guards one by one: each bad input gets its own exception type and a message
 * naming the offending argument (FoldBiasBadInputTest covers the end-to-end cases).
 */
@Tag("fold-bias")
class FoldBiasGuardsTest {
    /** t = n = 4: every key selected, so a valid selection compacts exactly (all NNLS weights 1). */
    private final FoldBiasConfig all = new FoldBiasConfig(4, 4, 4, 6, 2, 0.5, 1e-3);

    @Test
    void everyCountOfTheConfigMustBePositive() {
        assertThatThrownBy(() -> new FoldBiasConfig(4, 0, 4, 6, 2, 0.5, 1e-3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("n (context tokens) must be positive");
        assertThatThrownBy(() -> new FoldBiasConfig(4, 8, 4, 0, 2, 0.5, 1e-3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("referenceQueries must be positive");
        assertThatThrownBy(() -> new FoldBiasConfig(4, 8, 4, 6, 0, 0.5, 1e-3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("testQueries must be positive");
    }

    @Test
    void negativeQuerySpreadIsRejected() {
        assertThatThrownBy(() -> new FoldBiasConfig(4, 8, 4, 6, 2, -0.5, 1e-3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("querySpread must be finite and >= 0");
    }

    @Test
    void everyInputArrayIsShapeChecked() {
        FoldBiasInputs in = FoldBiasInputs.draw(all, 1);
        double[] q = in.referenceQueries();
        double[] qt = in.testQueries();
        double[] k = in.keys();
        double[] v = in.values();
        assertThatThrownBy(() -> new FoldBiasInputs(all, new double[23], qt, k, v))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reference queries has 23 elements");
        assertThatThrownBy(() -> new FoldBiasInputs(all, q, new double[7], k, v))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("test queries has 7 elements");
        assertThatThrownBy(() -> new FoldBiasInputs(all, q, qt, k, new double[15]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("values has 15 elements");
        assertThatThrownBy(() -> new FoldBiasInputs(all, null, qt, k, v))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reference queries is null");
    }

    @Test
    void nonFiniteValuesAreNamed() {
        FoldBiasInputs in = FoldBiasInputs.draw(all, 1);
        double[] v = in.values();
        v[2] = Double.NaN;
        assertThatThrownBy(() -> new FoldBiasInputs(all, in.referenceQueries(), in.testQueries(), in.keys(), v))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("values[2] is NaN");
    }

    private FoldBiasRun runWith(KeySelector selector) {
        return new FoldBias(CpuBackend.INSTANCE, selector, OutputBound::tv).run(FoldBiasInputs.draw(all, 1));
    }

    private static KeySelector returning(int... keys) {
        return (weights, queries, n, t) -> keys.clone();
    }

    /** Key 0 and key n − 1 are both legal: the range is [0, n). */
    @Test
    void aSelectionOfIncreasingInRangeKeysIsAccepted() {
        assertThat(runWith(returning(0, 1, 2, 3)).compaction().selected()).containsExactly(0, 1, 2, 3);
    }

    @Test
    void aSelectionOfTheWrongSizeIsRejected() {
        assertThatThrownBy(() -> runWith(returning(0, 1, 2)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("returned 3 keys, not t = 4");
    }

    @Test
    void aSelectionOutsideTheKeysOrOutOfOrderIsRejected() {
        for (int[] bad : new int[][] {{-1, 0, 1, 2}, {0, 1, 2, 4}, {0, 1, 1, 2}, {1, 0, 2, 3}}) {
            assertThatThrownBy(() -> runWith(returning(bad)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("key selection must be increasing indices in [0, 4), got "
                            + Arrays.toString(bad));
        }
    }

    @Test
    void keySelectionCannotChooseMoreKeysThanItIsGiven() {
        assertThatThrownBy(() -> KeySelection.topByMaxWeight(new double[] {0.5, 0.5}, 1, 2, 3))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("t (compact keys) = 3 exceeds the 2 keys");
    }

    @Test
    void foldNeedsPositiveSizes() {
        assertThatThrownBy(() -> RankOneFold.validate(new double[0], new double[0], new double[2], 0, 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("got t = 0, d = 2");
        assertThatThrownBy(() -> RankOneFold.validate(new double[0], new double[2], new double[0], 2, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("got t = 2, d = 0");
    }

    /** t = 2, d = 3: C_k needs 6 elements, β 2, u 3; each wrong length is reported with its requirement. */
    @Test
    void foldShapesAreCheckedOneByOne() {
        assertThatThrownBy(() -> RankOneFold.validate(new double[5], new double[2], new double[3], 2, 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("C_k has 5 (needs 6)");
        assertThatThrownBy(() -> RankOneFold.validate(new double[6], new double[3], new double[3], 2, 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("beta 3 (needs 2)");
        assertThatThrownBy(() -> RankOneFold.validate(new double[6], new double[2], new double[2], 2, 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("u 2 (needs 3)");
    }

    @Test
    void foldInputsMustBeFinite() {
        double[] nanKeys = {0, Double.NaN, 0, 0, 0, 0};
        double[] infBeta = {Double.POSITIVE_INFINITY, 0};
        double[] nanU = {0, 0, Double.NaN};
        assertThatThrownBy(() -> RankOneFold.validate(nanKeys, new double[2], new double[3], 2, 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("C_k[1] is NaN");
        assertThatThrownBy(() -> RankOneFold.validate(new double[6], infBeta, new double[3], 2, 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("beta[0] is Infinity");
        assertThatThrownBy(() -> RankOneFold.validate(new double[6], new double[2], nanU, 2, 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("u[2] is NaN");
    }

    /** The CPU twin itself validates before it folds (a short β would otherwise be read past its end). */
    @Test
    void cpuFoldValidatesItsArguments() {
        assertThatThrownBy(() -> new CpuRankOneFold().fold(new double[4], new double[1], new double[2], 2, 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("beta 1 (needs 2)");
    }

    @Test
    void frozenCacheNeedsKeysAndValuesOfItsShape() {
        assertThatThrownBy(() -> FrozenCache.freeze(new double[5], new double[6], 2, 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keys and values of 2x3");
        assertThatThrownBy(() -> FrozenCache.freeze(new double[6], new double[5], 2, 3))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("keys and values of 2x3");
    }

    @Test
    void maxAbsDifferenceNeedsEqualLengths() {
        assertThatThrownBy(() -> Dense.maxAbsDifference(new double[1], new double[2]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("length mismatch: 1 vs 2");
    }

    /** X = [1e-300], Y = [1e300]: the exact solution 1e600 overflows and is reported, not returned. */
    @Test
    void anOverflowingLeastSquaresSolutionIsReported() {
        assertThatThrownBy(() -> LeastSquares.solve(new double[] {1e-300}, 1, 1, new double[] {1e300}, 1))
                .isInstanceOf(ArithmeticException.class).hasMessageContaining("solution element 0 is Infinity");
    }

    /** A NaN in X makes EJML's decomposition fail; that failure is named, before any solution is read. */
    @Test
    void anUndecomposableLeastSquaresSystemIsReported() {
        double[] x = {Double.NaN, 1, 1, 1, 1, 1};
        assertThatThrownBy(() -> LeastSquares.solve(x, 3, 2, new double[] {1, 2, 3}, 1))
                .isInstanceOf(ArithmeticException.class).hasMessageContaining("the 3x2 system could not be decomposed");
    }

    /** Rows (1, 1) and (1, 1 + 1e-9) with λ = 0: nearly parallel, the KKT matrix's condition number is ~1e17. */
    @Test
    void anIllConditionedKktSystemIsRejectedByItsConditionNumber() {
        assertThatThrownBy(() -> FoldDirection.kkt(new double[] {1, 1, 1, 1 + 1e-9}, 2, 2, 0.0))
                .isInstanceOf(ArithmeticException.class).hasMessageContaining("2-norm condition number");
    }

    /**
     * One query A = [1e-310] (subnormal), λ = 0: the KKT matrix [[0, a], [a, 0]] has condition number 1, but
     * u = 1/a overflows; the non-finite u is reported, never returned.
     */
    @Test
    void aNonFiniteKktSolutionIsReported() {
        assertThatThrownBy(() -> FoldDirection.kkt(new double[] {1e-310}, 1, 1, 0.0))
                .isInstanceOf(ArithmeticException.class).hasMessageContaining("KKT solution u[0] is Infinity");
    }

    /** One query (1, 1), λ = 0: H = AᵀA = [[1, 1], [1, 1]] is singular, so its Cholesky factor does not exist. */
    @Test
    void aSingularRidgeMatrixIsRejectedByCholesky() {
        assertThatThrownBy(() -> FoldDirection.closedForm(new double[] {1, 1}, 1, 2, 0.0))
                .isInstanceOf(ArithmeticException.class).hasMessageContaining("is not positive definite");
    }

    /** Queries q and −q: a = 0, so aᵀH⁻¹a is exactly 0 and the closed form has no solution. */
    @Test
    void aZeroMeanQueryIsRejectedByTheClosedForm() {
        assertThatThrownBy(() -> FoldDirection.closedForm(new double[] {1, 2, -1, -2}, 2, 2, 1.0))
                .isInstanceOf(ArithmeticException.class)
                .hasMessageContaining("aᵀH⁻¹a = 0.0 (the mean reference query is zero)");
    }
}
