package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The numerical pieces on problems small enough to solve by hand, each pinned to its exact answer. Tolerance 1e-15
 * (a few ulp of answers of order 1) unless stated where it is checked.
 */
@Tag("fold-bias")
class SolverHandCasesTest {
    /**
     * A = [[1, 2]], b = 1 has many minimizers (x₁ + 2x₂ = 1, x ≥ 0). Lawson–Hanson enters the largest entry of
     * w = Aᵀb first and stops at zero residual, so it returns the one-column solution of the largest w_j.
     */
    @Test
    void nnlsEntersTheLargestGradientFirst() {
        assertThat(Nnls.solve(new double[] {1, 2}, 1, 2, new double[] {1})).containsExactly(new double[] {0.0, 0.5},
                within(1e-15));
        assertThat(Nnls.solve(new double[] {2, 1}, 1, 2, new double[] {1})).containsExactly(new double[] {0.5, 0.0},
                within(1e-15));
    }

    /** A = [[1, 1]], b = 1: w = (1, 1) ties, and the tie goes to the lower index (class contract). */
    @Test
    void nnlsBreaksEnteringTiesTowardTheLowerIndex() {
        assertThat(Nnls.solve(new double[] {1, 1}, 1, 2, new double[] {1})).containsExactly(new double[] {1.0, 0.0},
                within(1e-15));
    }

    /**
     * A = [[0, 0], [0, 1], [1, 1]]: the manifest's tolerance 10·eps·‖A‖₁·max(m, t) is 10·eps·2·3 ≈ 1.3e-14. With
     * b = (0, 1, 1 + 9 ulp), x = (0, (b₁ + b₂)/2) leaves the gradient of x₀ at (b₂ − b₁)/2 ≈ 1e-15, below it: x₀
     * stays exactly 0. With b₂ = 1 + 2⁻⁴⁰ the gradient is far above it and x₀ enters: x = (2⁻⁴⁰, 1).
     */
    @Test
    void nnlsStopsAtItsDocumentedTolerance() {
        double[] a = {0, 0, 0, 1, 1, 1};
        double below = 1 + 9 * Math.ulp(1.0);
        double[] x = Nnls.solve(a, 3, 2, new double[] {0, 1, below});
        assertThat(x[0]).isEqualTo(0.0);
        assertThat(x[1]).isCloseTo((1 + below) / 2, within(1e-15));
        assertThat(Nnls.solve(a, 3, 2, new double[] {0, 1, 1 + 0x1p-40}))
                .containsExactly(new double[] {0x1p-40, 1.0}, within(1e-15));
    }

    /**
     * A = [[−2, 2, −1], [−2, 1, 1]]: b = (2, 0)·1e5 has the NNLS solution (1, 2, 0)·1e5 (zero residual). At
     * b = (2, 0)·1e11 the gradient's rounding noise (~1e-4) dwarfs the tolerance (~3e-14, independent of b), the
     * third column enters and leaves forever, and the cap of 3·t = 9 outer steps ends it with a named exception.
     * (A mutant without the cap loops here until the test runner's timeout.) Tolerance 1e-9: about 70 ulp of 1e5.
     */
    @Test
    void nnlsIterationCapStopsACycle() {
        double[] a = {-2, 2, -1, -2, 1, 1};
        assertThat(Nnls.solve(a, 2, 3, new double[] {2e5, 0})).containsExactly(new double[] {1e5, 2e5, 0.0},
                within(1e-9));
        assertThatThrownBy(() -> Nnls.solve(a, 2, 3, new double[] {2e11, 0}))
                .isInstanceOf(ArithmeticException.class).hasMessageContaining("did not converge in 9 outer iterations");
    }

    /** A = I, b = (1, 1), x = (1, 0): g = Ax − b = (0, −1); x₁ = 0 with g₁ < 0 violates by 1/(‖A‖_F·‖b‖) = 1/2. */
    @Test
    void kktViolationCountsANegativeGradientAtZero() {
        double[] identity = {1, 0, 0, 1};
        assertThat(Nnls.kktViolation(identity, 2, 2, new double[] {1, 1}, new double[] {1, 0}))
                .isCloseTo(0.5, within(1e-15));
    }

    /** x = b = (−4, 1) with A = I: g = 0, so the whole violation is the negative weight, −x₀ / max|x| = 1. */
    @Test
    void kktViolationCountsANegativeWeightRelativeToTheLargest() {
        double[] identity = {1, 0, 0, 1};
        assertThat(Nnls.kktViolation(identity, 2, 2, new double[] {-4, 1}, new double[] {-4, 1})).isEqualTo(1.0);
    }

    /** b = 0 makes ‖A‖_F·‖b‖ = 0; the scale falls back to 1 and x = 0 is exactly optimal. */
    @Test
    void kktViolationOfAZeroTargetIsZero() {
        double[] identity = {1, 0, 0, 1};
        assertThat(Nnls.kktViolation(identity, 2, 2, new double[] {0, 0}, new double[] {0, 0})).isEqualTo(0.0);
    }

    @Test
    void normIsEuclidean() {
        assertThat(Dense.norm(new double[] {3, 4})).isEqualTo(5.0);
    }

    /**
     * X = [[1, 1], [1, 1], [1, 1]] (rank 1), Y = (1, 2, 3): every c with c₀ + c₁ = mean(Y) = 2 minimizes; the
     * documented answer for a rank-deficient system is the minimum-norm one, (1, 1). Tolerance 1e-12: the SVD
     * pseudo-inverse's rounding, generously.
     */
    @Test
    void rankDeficientLeastSquaresReturnsTheMinimumNormSolution() {
        double[] c = LeastSquares.solve(new double[] {1, 1, 1, 1, 1, 1}, 3, 2, new double[] {1, 2, 3}, 1);
        assertThat(c).containsExactly(new double[] {1.0, 1.0}, within(1e-12));
    }

    /**
     * A wide system whose two rows are equal but for the last bits (two reference queries 1.7e-16 apart, as the
     * fold-bias property found with a worker's NNLS that kept every key): its second singular value is rounding, not
     * rank. Inverting it (EJML's pseudo-inverse cut, ~max(m, n)·ε·σ_max) gave a refit whose normal equations missed by
     * 0.046; the minimum-norm solution of the rank-one system satisfies them to rounding (1e-14: a few ulps of XᵀY).
     */
    @Test
    void aSingularValueAtRoundingLevelIsNotInverted() {
        double[] x = {0.5815342216841753, 0.12379168086097507, 0.2946740974548495,
            0.5815342216841746, 0.12379168086097561, 0.2946740974548498};
        double[] y = {-0.7, -0.7000000000000002};
        double[] c = LeastSquares.solve(x, 2, 3, y, 1);
        for (int j = 0; j < 3; j++) {
            double normal = 0; // (Xᵀ(X·c − y))_j
            for (int i = 0; i < 2; i++) {
                double fitted = 0;
                for (int k = 0; k < 3; k++) {
                    fitted += x[i * 3 + k] * c[k];
                }
                normal += x[i * 3 + j] * (fitted - y[i]);
            }
            assertThat(normal).as("normal equation %d", j).isCloseTo(0.0, within(1e-14));
        }
    }

    /**
     * A = [[1, 0], [1, 1]], so AᵀA = [[2, 1], [1, 1]], a = (1, 1/2), Aᵀ1 = (2, 1). By hand, u(λ) = H⁻¹a / (aᵀH⁻¹a)
     * = (1/2 + λ, λ/2) / (1/2 + 5λ/4): u(1) = (6/7, 2/7) from both the KKT solve and the closed form. Tolerance
     * 1e-14 here and below: about 50 ulp of u for two small solves.
     */
    @Test
    void foldDirectionOfATwoByTwoProblem() {
        double[] a = {1, 0, 1, 1};
        assertThat(FoldDirection.kkt(a, 2, 2, 1.0)).containsExactly(new double[] {6.0 / 7, 2.0 / 7},
                within(1e-14));
        assertThat(FoldDirection.closedForm(a, 2, 2, 1.0)).containsExactly(new double[] {6.0 / 7, 2.0 / 7},
                within(1e-14));
    }

    /**
     * The broken solvers' own definitions on the same A, λ = 1: a top-left block 2AᵀA + λI is the problem with λ/2,
     * u(1/2) = (8/9, 2/9); the plain ridge fit is H⁻¹Aᵀ1 = [[3, 1], [1, 2]]⁻¹(2, 1) = (3/5, 1/5).
     */
    @Test
    void brokenFoldDirectionsSolveTheirStatedProblems() {
        double[] a = {1, 0, 1, 1};
        assertThat(BrokenParts.KKT_RIDGE_NOT_DOUBLED.foldDirection(a, 2, 2, 1.0))
                .containsExactly(new double[] {8.0 / 9, 2.0 / 9}, within(1e-14));
        assertThat(BrokenParts.RIDGE_WITHOUT_MEAN_CONSTRAINT.foldDirection(a, 2, 2, 1.0))
                .containsExactly(new double[] {0.6, 0.2}, within(1e-14));
    }
}
