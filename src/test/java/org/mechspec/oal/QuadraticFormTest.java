package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** QuadraticForm on hand-written 2×2 and 3×3 cases. */
@Tag("oal")
class QuadraticFormTest {

    /** [[1, 2], [2, 1]] has eigenvalues 3 and −1: no Cholesky factor. */
    @Test
    void indefiniteMatrixHasNoCholeskyFactor() {
        assertThatThrownBy(() -> QuadraticForm.cholesky(new double[] {1, 2, 2, 1}, 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not positive definite");
    }

    /**
     * The broken form (BrokenOal.notGramAll) builds L + Lᵀ from L's lower triangle (the upper one, here 7s, is never read):
     * L = [[1, ·, ·], [2, 3, ·], [4, 5, 6]] gives [[2, 2, 4], [2, 6, 5], [4, 5, 12]].
     */
    @Test
    void notGramFaultIsLPlusItsTranspose() {
        double[] l = {1, 7, 7, 2, 3, 7, 4, 5, 6};
        assertThat(BrokenOal.notGramAll(new double[][] {l}, 3)).containsExactly(2, 2, 4, 2, 6, 5, 4, 5, 12);
        assertThat(BrokenOal.notGramAll(new double[][] {{1, 7, 2, 3}}, 2)).containsExactly(2, 2, 2, 6);
    }
}
