package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mechspec.spec.Properties.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;
import org.mechspec.spec.Contract;
import org.mechspec.spec.PropertyRun;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Stress;
import org.mechspec.spec.Seeded;

/**
 * The fold-bias checks against definitions (contracts/fold-bias.json): each compares the mechanism with a
 * computation of its own, from the raw inputs (the full n-key attention, the selection rule, the bound's formula,
 * the fold direction's objective, the NNLS problem, the value refit's least squares, fp16 rounding), never with the mechanism's
 * other outputs. The seeded halves reuse {@link FoldBiasContracts}' protocol run and record every metric.
 */
@Tag("fold-bias")
class FoldBiasDefinitionContracts {
    private static final String PAPER = FoldBiasContracts.PAPER;

    private static FoldBiasInputs inputs(SeedRun run) {
        return FoldBiasInputs.draw(FoldBiasConfig.PROTOCOL, run.seed());
    }

    private static FoldBiasRun protocol(SeedRun run) {
        FoldBiasContracts.record(run);
        return FoldBiasContracts.protocol(run).run();
    }

    /**
     * The protocol stream Rng(seed) after the inputs' draws (rng.md: one stream per seed): the inputs take
     * d·(1 + m + mt + 2n) normals, in that order; the arbitrary key sets come next.
     */
    static Rng afterInputs(FoldBiasConfig c, long seed) {
        Rng rng = new Rng(seed);
        rng.normals(c.d() * (1 + c.referenceQueries() + c.testQueries() + 2 * c.n()), 0.0, 1.0);
        return rng;
    }

    /** The smallest arbitrary-selection error for this (backend, seed), computed once. */
    static double arbitraryError(SeedRun run) {
        return run.shared("arbitrary-selection-error", Double.class, () ->
                FidelityCheck.arbitrarySelectionError(run.backend(), inputs(run),
                        afterInputs(FoldBiasConfig.PROTOCOL, run.seed()), FidelityCheck.ARBITRARY_SELECTIONS));
    }

    // compaction_selects_top_weight_keys

    @Contract(paper = PAPER, check = "compaction_selects_top_weight_keys")
    @Test
    void selectionProperty(PropertyRun run) {
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllProblems(p -> {
            SelectionCheck.Result s = SelectionCheck.of(p.inputs(), subject.run(p.inputs()).compaction().selected());
            assertThat(s.holds()).as("%s keys off the definition's top-t: %s", s.mismatches(), s.detail()).isTrue();
        });
    }

    /**
     * Property half on the selection itself, with exact ties: weights from three levels, so many keys share the cut's
     * score, given to the run's selector as they are (no rounding between them and the definition): the selected set
     * is exactly the definition's top t, ties to the lower index, in increasing order.
     */
    @Contract(paper = PAPER, check = "compaction_selects_top_weight_keys")
    @Test
    void selectionBreaksExactTiesTowardTheLowerIndex(PropertyRun run) {
        selectionWithTies(KeySelector.on(run.backend()));
    }

    static void selectionWithTies(KeySelector selector) {
        qt().withExamples(Stress.examples(100)).forAll(integers().between(1, 4), integers().between(1, 40), integers().between(0, 39),
                longs().all()).checkAssert((queries, keys, tDraw, seed) -> {
            int t = 1 + tDraw % keys;
            Rng r = new Rng(seed);
            double[] weights = new double[queries * keys];
            for (int i = 0; i < weights.length; i++) {
                weights[i] = (1 + Math.floor(3 * r.uniform())) / 8; // 1/8, 2/8 or 3/8: exact ties everywhere
            }
            double[] score = new double[keys];
            for (int j = 0; j < keys; j++) {
                for (int i = 0; i < queries; i++) {
                    score[j] = Math.max(score[j], weights[i * keys + j]);
                }
            }
            boolean[] chosen = SelectionCheck.topByScore(score, t);
            int[] expected = java.util.stream.IntStream.range(0, keys).filter(j -> chosen[j]).toArray();
            int[] selected = selector.select(weights.clone(), queries, keys, t);
            long mismatches = java.util.stream.IntStream.range(0, keys)
                    .filter(j -> chosen[j] != java.util.Arrays.stream(selected).anyMatch(x -> x == j)).count();
            Stress.figure("selection_mismatches", mismatches, "=", 0, () -> queries + " queries, " + keys + " keys, t = " + t);
            assertThat(selected).as("selection_mismatches = %d > 0: selected %s, the definition's top %d (ties to the lower index) %s",
                    mismatches, java.util.Arrays.toString(selected), t, java.util.Arrays.toString(expected)).containsExactly(expected);
        });
    }

    @Contract(paper = PAPER, check = "compaction_selects_top_weight_keys")
    @Seeded
    void selectionSeeded(SeedRun run) {
        SelectionCheck.Result s = SelectionCheck.of(inputs(run), protocol(run).compaction().selected());
        run.metric("selection_mismatches", s.mismatches());
        assertThat(s.holds()).as("selection_mismatches %s: %s", s.mismatches(), s.detail()).isTrue();
    }

    // compaction_output_fidelity

    /**
     * Planted problems: the top-t cache reproduces the full attention, a set missing a planted key cannot. The
     * arbitrary sets run on the same backend, as in the seeded half: the claim compares selections, not
     * implementations (with t = n an arbitrary set is the selected one, and only rounding may tell them apart).
     */
    @Contract(paper = PAPER, check = "compaction_output_fidelity")
    @Test
    void fidelityProperty(PropertyRun run) {
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllPlantedProblems(p -> {
            FoldBiasRun r = subject.run(p.inputs());
            FidelityCheck.Result f = new FidelityCheck.Result(FidelityCheck.outputError(p.inputs(), r.online().deployedOutputs()),
                    FidelityCheck.arbitrarySelectionError(run.backend(), p.inputs(), new Rng(p.seed() + 1),
                            FoldBiasProblems.PLANTED_ARBITRARY_SELECTIONS));
            assertThat(f.holds()).as("compaction error %s <= best arbitrary selection's %s", f.compactionError(),
                    f.arbitraryError()).isTrue();
        });
    }

    @Contract(paper = PAPER, check = "compaction_output_fidelity")
    @Seeded
    void fidelitySeeded(SeedRun run) {
        FidelityCheck.Result f = new FidelityCheck.Result(
                FidelityCheck.outputError(inputs(run), protocol(run).online().deployedOutputs()), arbitraryError(run));
        run.metric("compaction_output_error", f.compactionError())
                .metric("arbitrary_selection_output_error", f.arbitraryError());
        assertThat(f.holds()).as("compaction_output_error %s <= arbitrary_selection_output_error %s",
                f.compactionError(), f.arbitraryError()).isTrue();
    }

    // output_bound_matches_definition

    @Contract(paper = PAPER, check = "output_bound_matches_definition")
    @Test
    void boundDefinitionProperty(PropertyRun run) {
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllProblems(p -> {
            BoundCheck.Result b = BoundCheck.of(subject.run(p.inputs()), p.inputs().testQueries());
            assertThat(b.holds()).as("bound differs from its definition by %s (%s x tolerance, query %s)",
                    b.maxError(), b.worstRatio(), b.worstQuery()).isTrue();
        });
    }

    @Contract(paper = PAPER, check = "output_bound_matches_definition")
    @Seeded
    void boundDefinitionSeeded(SeedRun run) {
        BoundCheck.Result b = BoundCheck.of(protocol(run), inputs(run).testQueries());
        run.metric("output_bound_definition_error", b.maxError());
        assertThat(b.holds()).as("output_bound_definition_error %s (%s x tolerance, query %s)", b.maxError(),
                b.worstRatio(), b.worstQuery()).isTrue();
    }

    // fold_direction_is_constrained_minimizer

    @Contract(paper = PAPER, check = "fold_direction_is_constrained_minimizer")
    @Test
    void foldDirectionProperty(PropertyRun run) {
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllProblems(p -> {
            FoldDirectionCheck.Result f = FoldDirectionCheck.of(p.inputs(), subject.run(p.inputs()).fold().direction());
            assertThat(f.holds()).as("stationarity residual %s <= %s, constraint error %s <= %s", f.residual(),
                    f.tolerance(), f.constraintError(), f.constraintTolerance()).isTrue();
        });
    }

    @Contract(paper = PAPER, check = "fold_direction_is_constrained_minimizer")
    @Seeded
    void foldDirectionSeeded(SeedRun run) {
        FoldDirectionCheck.Result f = FoldDirectionCheck.of(inputs(run), protocol(run).fold().direction());
        run.metric("fold_direction_stationarity_error", f.residual())
                .metric("fold_direction_constraint_error", f.constraintError());
        assertThat(f.holds()).as("fold_direction_stationarity_error %s <= %s, fold_direction_constraint_error %s <= %s",
                f.residual(), f.tolerance(), f.constraintError(), f.constraintTolerance()).isTrue();
    }

    // nnls_weights_solve_definition

    @Contract(paper = PAPER, check = "nnls_weights_solve_definition")
    @Test
    void nnlsDefinitionProperty(PropertyRun run) {
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllProblems(p -> {
            Compaction comp = subject.run(p.inputs()).compaction();
            NnlsCheck.Result f = NnlsCheck.of(p.inputs(), comp.selected(), comp.weights());
            assertThat(f.holds()).as("NNLS KKT violation %s (%s x allowance, %s negative)", f.violation(),
                    f.worstRatio(), f.negative()).isTrue();
        });
    }

    @Contract(paper = PAPER, check = "nnls_weights_solve_definition")
    @Seeded
    void nnlsDefinitionSeeded(SeedRun run) {
        Compaction comp = protocol(run).compaction();
        NnlsCheck.Result f = NnlsCheck.of(inputs(run), comp.selected(), comp.weights());
        run.metric("nnls_definition_kkt_violation", f.violation());
        assertThat(f.holds()).as("nnls_definition_kkt_violation %s (%s x allowance, %s negative)", f.violation(),
                f.worstRatio(), f.negative()).isTrue();
    }

    // value_refit_solves_definition_least_squares

    @Contract(paper = PAPER, check = "value_refit_solves_definition_least_squares")
    @Test
    void refitDefinitionProperty(PropertyRun run) {
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllProblems(p -> {
            RefitCheck.Result f = RefitCheck.of(p.inputs(), subject.run(p.inputs()));
            assertThat(f.holds()).as("normal-equation residual %s <= %s", f.residual(), f.tolerance()).isTrue();
        });
    }

    @Contract(paper = PAPER, check = "value_refit_solves_definition_least_squares")
    @Seeded
    void refitDefinitionSeeded(SeedRun run) {
        RefitCheck.Result f = RefitCheck.of(inputs(run), protocol(run));
        run.metric("value_refit_definition_residual", f.residual());
        assertThat(f.holds()).as("value_refit_definition_residual %s <= %s", f.residual(), f.tolerance()).isTrue();
    }

    // keys_rounded_to_nearest_fp16

    @Contract(paper = PAPER, check = "keys_rounded_to_nearest_fp16")
    @Test
    void nearestRoundingProperty(PropertyRun run) {
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllProblems(p -> {
            FoldBiasRun r = subject.run(p.inputs());
            assertThat(RoundingCheck.offNearest(r.fold().foldedKeys(), r.fold().roundedKeys())).as("keys off nearest fp16").isZero();
        });
    }

    @Contract(paper = PAPER, check = "keys_rounded_to_nearest_fp16")
    @Seeded
    void nearestRoundingSeeded(SeedRun run) {
        FoldBiasRun r = protocol(run);
        long off = RoundingCheck.offNearest(r.fold().foldedKeys(), r.fold().roundedKeys());
        run.metric("rounded_keys_off_nearest_fp16", off);
        assertThat(off).as("rounded_keys_off_nearest_fp16").isZero();
    }
}
