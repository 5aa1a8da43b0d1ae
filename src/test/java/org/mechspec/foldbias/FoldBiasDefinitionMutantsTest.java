package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.Backend;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.CpuBackendDecorator;
import org.mechspec.compute.HalfFloat;
import org.mechspec.spec.Breaks;

/**
 * Every check against a definition can fail: a mechanism broken in the test (a component through its seam, a
 * decorator over the backend, or a broken intermediate), run on the protocol (seed 42, CPU), makes the check report
 * false, while the unbroken mechanism passes the same check on the same input. Where an older check compared the
 * mechanism with itself, the test also shows that check still passes the broken mechanism.
 */
@Tag("fold-bias")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FoldBiasDefinitionMutantsTest {
    private static final long SEED = 42;
    /** Computed per test instance (not in a static initializer), so a relaunch against a mutant recomputes it. */
    private final FoldBiasInputs in = FoldBiasInputs.draw(FoldBiasConfig.PROTOCOL, SEED);
    private final FoldBiasRun unbroken = new FoldBias(CpuBackend.INSTANCE).run(in);

    /** The survivor: the sort deleted from the selection, so the compaction keeps keys 0..t−1. */
    private static final KeySelector FIRST_KEYS = (weights, queries, keys, t) -> {
        int[] first = new int[t];
        for (int j = 0; j < t; j++) {
            first[j] = j;
        }
        return first;
    };

    private FoldBiasRun run(KeySelector selection, TvBound bound) {
        return new FoldBias(CpuBackend.INSTANCE, selection, bound).run(in);
    }

    private FoldBiasRun run(Backend backend) {
        return new FoldBias(backend).run(in);
    }

    @Test
    @Breaks(paper = "fold-bias", check = "compaction_selects_top_weight_keys")
    void firstKeysAreNotTheTopWeightKeys() {
        assertThat(SelectionCheck.of(in, unbroken.compaction().selected()).holds()).isTrue();
        SelectionCheck.Result broken = SelectionCheck.of(in, run(FIRST_KEYS, OutputBound::tv).compaction().selected());
        assertThat(broken.mismatches()).isPositive();
        assertThat(broken.holds()).isFalse();
    }

    /** Ties broken toward the higher index: invisible on random weights, rejected by the property half's exact ties. */
    @Test
    @Breaks(paper = "fold-bias", check = "compaction_selects_top_weight_keys")
    void tiesBrokenTowardTheHigherIndexFailTheTiesProperty() {
        KeySelector tiesHigh = (weights, queries, keys, t) -> {
            double[] score = new double[keys];
            for (int j = 0; j < keys; j++) {
                for (int i = 0; i < queries; i++) {
                    score[j] = Math.max(score[j], weights[i * keys + j]);
                }
            }
            Integer[] order = new Integer[keys];
            java.util.Arrays.setAll(order, j -> j);
            java.util.Arrays.sort(order, (a, b) -> score[a] != score[b] ? Double.compare(score[b], score[a]) : Integer.compare(b, a));
            return java.util.Arrays.stream(order, 0, t).mapToInt(Integer::intValue).sorted().toArray();
        };
        FoldBiasDefinitionContracts.selectionWithTies(KeySelector.TOP_BY_MAX_WEIGHT);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> FoldBiasDefinitionContracts.selectionWithTies(tiesHigh))
                .isInstanceOf(AssertionError.class).hasMessageContaining("selection_mismatches = ");
    }

    @Test
    @Breaks(paper = "fold-bias", check = "compaction_output_fidelity")
    void firstKeysAreNoMoreFaithfulThanArbitraryKeys() {
        double arbitrary = FidelityCheck.arbitrarySelectionError(CpuBackend.INSTANCE, in,
                FoldBiasDefinitionContracts.afterInputs(FoldBiasConfig.PROTOCOL, SEED), FidelityCheck.ARBITRARY_SELECTIONS);
        FoldBiasRun first = run(FIRST_KEYS, OutputBound::tv);
        assertThat(new FidelityCheck.Result(FidelityCheck.outputError(in, unbroken.online().deployedOutputs()), arbitrary).holds())
                .isTrue();
        assertThat(new FidelityCheck.Result(FidelityCheck.outputError(in, first.online().deployedOutputs()), arbitrary).holds())
                .isFalse();
        assertThat(Checks.outputErrorBounded(FoldBiasMetrics.of(first), FoldBiasContracts.threshold(
                "same_value_output_error_bound"))).as("the old checks pass the first-t cache").isTrue();
    }

    /** The survivor: a Pinsker term twice too large still leaves slack ≥ 0; so does a bound half as large here. */
    @Test
    @Breaks(paper = "fold-bias", check = "output_bound_matches_definition")
    void loosePinskerTermAndTooTightBoundDifferFromTheDefinition() {
        assertThat(BoundCheck.of(unbroken, in.testQueries()).holds()).isTrue();
        FoldBiasRun loose = run(KeySelector.TOP_BY_MAX_WEIGHT,
                (p, delta) -> Math.min(OutputBound.tanhTerm(delta), 2 * StrictMath.sqrt(OutputBound.kl(p, delta) / 2)));
        FoldBiasRun tight = run(KeySelector.TOP_BY_MAX_WEIGHT, (p, delta) -> OutputBound.tv(p, delta) / 2);
        double slack = FoldBiasContracts.threshold("same_value_output_error_bound");
        for (FoldBiasRun broken : new FoldBiasRun[] {loose, tight}) {
            assertThat(Checks.outputErrorBounded(FoldBiasMetrics.of(broken), slack)).as("old slack check").isTrue();
            assertThat(BoundCheck.of(broken, in.testQueries()).holds()).isFalse();
        }
    }

    /** u fitted with twice the ridge weight still meets its constraint and its own closed form, not the definition. */
    @Test
    @Breaks(paper = "fold-bias", check = "fold_direction_is_constrained_minimizer")
    void foldDirectionOfAnotherObjectiveIsNotTheMinimizer() {
        assertThat(FoldDirectionCheck.of(in, unbroken.fold().direction()).holds()).isTrue();
        FoldBiasConfig c = in.config();
        FoldBiasConfig doubled = new FoldBiasConfig(c.d(), c.n(), c.t(), c.referenceQueries(), c.testQueries(),
                c.querySpread(), 2 * c.lambda());
        FoldBiasRun broken = new FoldBias(CpuBackend.INSTANCE).run(new FoldBiasInputs(doubled, in.referenceQueries(),
                in.testQueries(), in.keys(), in.values()));
        FoldBiasMetrics m = FoldBiasMetrics.of(broken);
        assertThat(Checks.kktMatchesReference(m, FoldBiasContracts.threshold("ridge_constrained_kkt_reference"))).isTrue();
        assertThat(Checks.contextProjectionMean(m, FoldBiasContracts.threshold("context_projection_mean_constraint")))
                .isTrue();
        assertThat(FoldDirectionCheck.of(in, broken.fold().direction()).holds()).isFalse();
    }

    /** u fitted to queries scaled by 2 (A off by that factor) passes the older checks, which read A from the run. */
    @Test
    @Breaks(paper = "fold-bias", check = "fold_direction_is_constrained_minimizer")
    void foldDirectionOfMisScaledQueriesMissesTheConstraint() {
        double[] doubled = Dense.scaled(in.referenceQueries(), 2.0);
        FoldBiasRun broken = new FoldBias(CpuBackend.INSTANCE).run(new FoldBiasInputs(in.config(), doubled,
                in.testQueries(), in.keys(), in.values()));
        FoldBiasMetrics m = FoldBiasMetrics.of(broken);
        assertThat(Checks.contextProjectionMean(m, FoldBiasContracts.threshold("context_projection_mean_constraint")))
                .isTrue();
        assertThat(Checks.kktMatchesReference(m, FoldBiasContracts.threshold("ridge_constrained_kkt_reference"))).isTrue();
        FoldDirectionCheck.Result f = FoldDirectionCheck.of(in, broken.fold().direction());
        assertThat(f.constraintError()).isGreaterThan(f.constraintTolerance());
        assertThat(f.holds()).isFalse();
    }

    /**
     * NNLS weights of the problem without the row-max shift (rows of E scaled by e^{m_row}, a differently weighted
     * fit): they meet the KKT conditions of the E they were fitted to, as the older check measures, not the definition's.
     */
    @Test
    @Breaks(paper = "fold-bias", check = "nnls_weights_solve_definition")
    void nnlsOnUnshiftedScoresMissesTheDefinition() {
        Compaction comp = unbroken.compaction();
        assertThat(NnlsCheck.of(in, comp.selected(), comp.weights()).holds()).isTrue();
        FoldBiasConfig c = in.config();
        int m = c.referenceQueries();
        int t = comp.selected().length;
        double[] s = Dense.scaled(Dense.timesTransposed(in.referenceQueries(), m, c.d(), in.keys(), c.n()), c.scale());
        double[] e = new double[s.length];
        double[] b = new double[m];
        for (int i = 0; i < s.length; i++) {
            e[i] = StrictMath.exp(s[i]);
            b[i / c.n()] += e[i];
        }
        double[] eSel = Dense.columns(e, m, c.n(), comp.selected());
        double[] w = Nnls.solve(eSel, m, t, b);
        assertThat(Nnls.kktViolation(eSel, m, t, b, w)).as("older check's figure")
                .isLessThanOrEqualTo(FoldBiasContracts.threshold("nnls_kkt_conditions"));
        assertThat(NnlsCheck.of(in, comp.selected(), w).holds()).isFalse();
    }

    /** Attention with logits 1e-6 too large: the refit solves its own (wrong) X_h and Y exactly, not the definition's. */
    @Test
    @Breaks(paper = "fold-bias", check = "value_refit_solves_definition_least_squares")
    void refitOnSkewedAttentionMissesTheDefinition() {
        assertThat(RefitCheck.of(in, unbroken).holds()).isTrue();
        FoldBiasRun broken = run(new SkewedAttention(1 + 1e-6));
        assertThat(Checks.valueNormalEquations(FoldBiasMetrics.of(broken),
                FoldBiasContracts.threshold("rounded_value_fit_normal_equations"))).as("old check").isTrue();
        assertThat(RefitCheck.of(in, broken).holds()).isFalse();
    }

    /** fp16 rounding toward zero: still on the grid and still changing K_f, but not the nearest value. */
    @Test
    @Breaks(paper = "fold-bias", check = "keys_rounded_to_nearest_fp16")
    void roundingTowardZeroIsNotNearest() {
        assertThat(RoundingCheck.offNearest(unbroken.fold().foldedKeys(), unbroken.fold().roundedKeys())).isZero();
        FoldBiasRun broken = run(new TowardZeroRounding());
        assertThat(Checks.keysReallyRounded(FoldBiasMetrics.of(broken))).as("old check").isTrue();
        assertThat(RoundingCheck.offNearest(broken.fold().foldedKeys(), broken.fold().roundedKeys())).isPositive();
    }

    /** fp64 attention on queries scaled by a factor: every logit off by that factor. */
    private static final class SkewedAttention extends CpuBackendDecorator {
        private final double factor;

        SkewedAttention(double factor) {
            this.factor = factor;
        }

        @Override
        public double[] attention(AttentionShape s, double[] q, double[] k, double[] v, double[] bias) {
            return CpuBackend.INSTANCE.attention(s, Dense.scaled(q, factor), k, v, bias);
        }
    }

    /** fp16 rounding toward zero: the nearest value, stepped one fp16 ulp toward zero where it rounded away. */
    private static final class TowardZeroRounding extends CpuBackendDecorator {
        @Override
        public double[] roundToHalf(double[] x) {
            double[] out = CpuBackend.INSTANCE.roundToHalf(x);
            for (int i = 0; i < x.length; i++) {
                if (Math.abs(out[i]) > Math.abs(x[i])) {
                    out[i] = HalfFloat.fromHalfBits((short) (HalfFloat.toHalfBits(out[i]) - 1));
                }
            }
            return out;
        }
    }
}
