package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CpuBackend;

/**
 * What a run records besides its arrays: the fit ledger (FoldBiasRun.fitLog), the negative-weight count of the
 * metrics, and the fused broken fold's keys. Small problems (d = 8, n = 32, t = 8), computed per test.
 */
@Tag("fold-bias")
class FoldBiasRecordTest {
    private final FoldBiasConfig small = new FoldBiasConfig(8, 32, 8, 16, 4, 0.5, 1e-3);

    /** protocols.md (fold-bias)'s offline fits in protocol order, none marked as after the freeze. */
    @Test
    void theRunLedgerListsEveryFitInOrder() {
        FoldBiasRun r = new FoldBias(CpuBackend.INSTANCE).run(FoldBiasInputs.draw(small, 3));
        assertThat(r.online().fitLog()).containsExactly("beta (NNLS on exp(beta))", "compact values C_v",
                "fold direction (KKT)", "fold direction (closed-form reference)",
                "value refit C_v' on the rounded keys");
        assertThat(r.online().fitsAfterFreeze()).isZero();
    }

    /** Every fitter entry point logs under its own name; a fit after freeze() is marked and counted. */
    @Test
    void theFitterMarksFitsAfterFreezing() {
        OfflineFitter fitter = new OfflineFitter(Solvers.EXACT);
        double[] a = {1, 0, 1, 1};
        fitter.nnls("w", a, 2, 2, new double[] {1, 1});
        fitter.foldDirection(a, 2, 2, 1.0);
        fitter.foldDirectionReference(a, 2, 2, 1.0);
        fitter.freeze();
        fitter.leastSquares("late", a, 2, 2, new double[] {1, 1}, 1);
        assertThat(fitter.log()).containsExactly("w", "fold direction (KKT)", "fold direction (closed-form reference)",
                "after freeze: late");
        assertThat(fitter.fitsAfterFreeze()).isEqualTo(1);
    }

    /** The metric counts negative weights: two planted in a real run's compaction give exactly 2. */
    @Test
    void negativeWeightsAreCounted() {
        FoldBiasRun r = new FoldBias(CpuBackend.INSTANCE).run(FoldBiasInputs.draw(small, 3));
        Compaction c = r.compaction();
        double[] w = c.weights().clone();
        w[0] = -0.5;
        w[1] = -1e-300;
        Compaction planted = new Compaction(c.selected(), c.nnlsMatrix(), c.nnlsTarget(), w, c.kept(), c.compactKeys(),
                c.beta(), c.compactValues(), c.target());
        FoldBiasRun withNegatives = new FoldBiasRun(r.config(), planted, r.fold(), r.online(), r.evaluation());
        assertThat(FoldBiasMetrics.of(r).negativeWeights()).isZero();
        assertThat(FoldBiasMetrics.of(withNegatives).negativeWeights()).isEqualTo(2);
    }

    /**
     * The fused broken fold really folds with one rounding: K_f[j, c] = fma(β_j, u_c, C_k[j, c]) bit for bit, and
     * on this problem that differs from the twin's two roundings somewhere (β, u, C_k do not depend on the fold).
     */
    @Test
    void fusedFoldUsesFusedMultiplyAdd() {
        FoldBiasRun r = BrokenParts.with(BrokenParts.FUSED_FOLD).run(FoldBiasInputs.draw(small, 3));
        double[] ck = r.compaction().compactKeys();
        double[] beta = r.compaction().beta();
        double[] u = r.fold().direction();
        int d = small.d();
        int differences = 0;
        for (int i = 0; i < ck.length; i++) {
            double fused = Math.fma(beta[i / d], u[i % d], ck[i]);
            assertThat(Double.doubleToRawLongBits(r.fold().foldedKeys()[i])).isEqualTo(Double.doubleToRawLongBits(fused));
            differences += fused != ck[i] + beta[i / d] * u[i % d] ? 1 : 0;
        }
        assertThat(differences).isPositive();
    }
}
