package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.function.BiPredicate;
import java.util.function.ToDoubleFunction;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;
import org.mechspec.spec.Contract;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;
import org.mechspec.spec.PropertyRun;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;
import org.mechspec.spec.Stress;

/**
 * The fold-bias contracts (protocols.md (fold-bias), contracts/fold-bias.json). Each check has a property half over generated
 * problems (on the run's backend: the worker's where one is judged) and a seeded half that runs the pinned protocol
 * once per (backend, seed), records every metric and then asserts the check.
 */
@Tag("fold-bias")
class FoldBiasContracts {
    static final String PAPER = "fold-bias";

    /** One protocol run: what it produced, how long it took, and the fingerprint of its inputs. */
    record Measured(FoldBiasRun run, FoldBiasMetrics metrics, double elapsedSeconds, String inputsSha256) {
    }

    /** The protocol for this (backend, seed), run once and shared by every seeded check. */
    static Measured protocol(SeedRun run) {
        return run.protocol(Measured.class, (seed, backend) -> {
            long start = System.nanoTime();
            FoldBiasInputs inputs = FoldBiasInputs.draw(FoldBiasConfig.PROTOCOL, seed);
            FoldBiasRun result = new FoldBias(backend).run(inputs);
            FoldBiasMetrics metrics = FoldBiasMetrics.of(result);
            double seconds = (System.nanoTime() - start) * 1e-9;
            return new Measured(result, metrics, seconds, inputs.sha256());
        });
    }

    /** Records every per-seed metric, the wall time and the input fingerprint, then returns the metrics. */
    static FoldBiasMetrics record(SeedRun run) {
        Measured x = protocol(run);
        FoldBiasMetrics m = x.metrics();
        run.metrics(m);
        run.runtime("elapsed_seconds", x.elapsedSeconds());
        run.dataset("synthetic-inputs-seed-" + run.seed(), x.inputsSha256());
        return m;
    }

    static double threshold(String check) {
        Manifest manifest = ManifestLoader.forPaper(PAPER);
        return manifest.check(check).threshold();
    }

    /**
     * Property half of a roundoff-level check: its predicate at max(threshold, 64·eps·S) on every generated
     * problem, S the problem's own rounding scale (see {@link PropertyTolerance}).
     */
    private static void roundoffProperty(PropertyRun run, String check, ToDoubleFunction<FoldBiasRun> scale,
                                         BiPredicate<FoldBiasMetrics, Double> holds,
                                         ToDoubleFunction<FoldBiasMetrics> measured) {
        double threshold = threshold(check);
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllProblems(p -> {
            FoldBiasRun r = subject.run(p.inputs());
            double tol = PropertyTolerance.of(threshold, scale.applyAsDouble(r));
            FoldBiasMetrics m = FoldBiasMetrics.of(r);
            Stress.figure("error", measured.applyAsDouble(m), "<=", tol, () -> p);
            assertThat(holds.test(m, tol)).as("%s: %s within %s", check, measured.applyAsDouble(m), tol).isTrue();
        });
    }

    // rank_one_logit_identity_reference

    @Contract(paper = PAPER, check = "rank_one_logit_identity_reference")
    @Test
    void rankOneLogitIdentityProperty(PropertyRun run) {
        roundoffProperty(run, "rank_one_logit_identity_reference", PropertyTolerance::logitScale, Checks::rankOneLogitIdentity,
                FoldBiasMetrics::logitIdentityError);
    }

    @Contract(paper = PAPER, check = "rank_one_logit_identity_reference")
    @Seeded
    void rankOneLogitIdentitySeeded(SeedRun run) {
        record(run);
        run.check(); // the manifest's figures
    }

    // context_projection_mean_constraint

    @Contract(paper = PAPER, check = "context_projection_mean_constraint")
    @Test
    void contextProjectionMeanProperty(PropertyRun run) {
        roundoffProperty(run, "context_projection_mean_constraint", PropertyTolerance::projectionScale, Checks::contextProjectionMean,
                FoldBiasMetrics::projectionMeanError);
    }

    @Contract(paper = PAPER, check = "context_projection_mean_constraint")
    @Seeded
    void contextProjectionMeanSeeded(SeedRun run) {
        record(run);
        run.check(); // the manifest's figures
    }

    // ridge_constrained_kkt_reference

    @Contract(paper = PAPER, check = "ridge_constrained_kkt_reference")
    @Test
    void kktReferenceProperty(PropertyRun run) {
        roundoffProperty(run, "ridge_constrained_kkt_reference", PropertyTolerance::kktScale, Checks::kktMatchesReference,
                FoldBiasMetrics::kktReferenceError);
    }

    @Contract(paper = PAPER, check = "ridge_constrained_kkt_reference")
    @Seeded
    void kktReferenceSeeded(SeedRun run) {
        record(run);
        run.check(); // the manifest's figures
    }

    // keys_really_rounded_before_value_refit

    @Contract(paper = PAPER, check = "keys_really_rounded_before_value_refit")
    @Test
    void keysReallyRoundedProperty(PropertyRun run) {
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllProblems(p -> {
            FoldBiasMetrics m = FoldBiasMetrics.of(subject.run(p.inputs()));
            assertThat(Checks.keysReallyRounded(m))
                    .as("%s refit key elements off the fp16 grid, %s changed by rounding", m.refitKeysOffFp16Grid(),
                            m.refitKeysChangedByRounding()).isTrue();
        });
    }

    @Contract(paper = PAPER, check = "keys_really_rounded_before_value_refit")
    @Seeded
    void keysReallyRoundedSeeded(SeedRun run) {
        record(run);
        run.check(); // the manifest's figures
    }

    // rounded_value_fit_normal_equations

    @Contract(paper = PAPER, check = "rounded_value_fit_normal_equations")
    @Test
    void valueNormalEquationsProperty(PropertyRun run) {
        roundoffProperty(run, "rounded_value_fit_normal_equations", PropertyTolerance::normalEquationScale, Checks::valueNormalEquations,
                FoldBiasMetrics::valueNormalEquationError);
    }

    @Contract(paper = PAPER, check = "rounded_value_fit_normal_equations")
    @Seeded
    void valueNormalEquationsSeeded(SeedRun run) {
        record(run);
        run.check(); // the manifest's figures
    }

    // same_value_output_error_bound

    @Contract(paper = PAPER, check = "same_value_output_error_bound")
    @Test
    void outputErrorBoundProperty(PropertyRun run) {
        double threshold = run.threshold();
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllProblems(p -> {
            FoldBiasMetrics m = FoldBiasMetrics.of(subject.run(p.inputs()));
            assertThat(Checks.outputErrorBounded(m, threshold))
                    .as("minimum bound slack %s >= -%s", m.minimumOutputBoundSlack(), threshold).isTrue();
        });
    }

    @Contract(paper = PAPER, check = "same_value_output_error_bound")
    @Seeded
    void outputErrorBoundSeeded(SeedRun run) {
        record(run);
        run.check(); // the manifest's figures
    }

    // dropping_bias_changes_attention

    /**
     * On queries with A·u = 1 the fold is exact before rounding, so for problems that really compact (see
     * {@link FoldBiasProblems#compactingProblems}) dropping β must cost at least the threshold factor times what
     * folding and fp16 rounding cost.
     */
    @Contract(paper = PAPER, check = "dropping_bias_changes_attention")
    @Test
    void droppingBiasChangesAttentionProperty(PropertyRun run) {
        double factor = run.threshold();
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllCompactingProblems(p -> {
            FoldBiasRun offline = subject.run(p.inputs());
            FoldBiasInputs onSubspace = FoldBiasProblems.onFoldSubspace(p, offline.fold().direction());
            FoldBiasMetrics m = FoldBiasMetrics.of(subject.run(onSubspace));
            assertThat(Checks.droppingBiasMatters(m, factor))
                    .as("drop error %s >= %s x folded error %s", m.dropBiasOutputError(), factor, m.foldedOutputError())
                    .isTrue();
        });
    }

    @Contract(paper = PAPER, check = "dropping_bias_changes_attention")
    @Seeded
    void droppingBiasChangesAttentionSeeded(SeedRun run) {
        record(run);
        run.check(); // the manifest's figures
    }

    // offline_fit_is_frozen

    @Contract(paper = PAPER, check = "offline_fit_is_frozen")
    @Test
    void offlineFitIsFrozenProperty(PropertyRun run) {
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllProblems(p -> {
            FoldBiasMetrics m = FoldBiasMetrics.of(subject.run(p.inputs()));
            assertThat(Checks.offlineFitFrozen(m))
                    .as("%s fits after freezing; cache SHA-256 %s then %s", m.modelCalls(), m.cacheSha256AtFreeze(),
                            m.cacheSha256AfterOnline()).isTrue();
        });
    }

    @Contract(paper = PAPER, check = "offline_fit_is_frozen")
    @Seeded
    void offlineFitIsFrozenSeeded(SeedRun run) {
        FoldBiasMetrics m = record(run);
        run.check(Checks.offlineFitFrozen(m));
    }

    // nnls_kkt_conditions

    @Contract(paper = PAPER, check = "nnls_kkt_conditions")
    @Test
    void nnlsKktProperty(PropertyRun run) {
        double threshold = run.threshold();
        FoldBias subject = new FoldBias(run.backend());
        FoldBiasProblems.forAllProblems(p -> {
            FoldBiasMetrics m = FoldBiasMetrics.of(subject.run(p.inputs()));
            assertThat(Checks.nnlsKkt(m, threshold))
                    .as("NNLS KKT violation %s (negative weights %s) <= %s", m.nnlsKktViolation(), m.negativeWeights(),
                            threshold).isTrue();
        });
    }

    @Contract(paper = PAPER, check = "nnls_kkt_conditions")
    @Seeded
    void nnlsKktSeeded(SeedRun run) {
        FoldBiasMetrics m = record(run);
        run.check(Checks.nnlsKkt(m, run.threshold()));
    }

    // fold_kernel_matches_cpu_twin (CUDA only)

    /** Fresh shapes per seed, tiny and ragged ones included; the kernel's outputs start poisoned (NaN). */
    @Contract(paper = PAPER, check = "fold_kernel_matches_cpu_twin")
    @Seeded(gpu = true)
    @Tag("gpu")
    void foldKernelMatchesCpuTwin(SeedRun run) {
        Rng rng = new Rng(run.seed());
        int[][] shapes = {{1, 1}, {64, 64}, {1 + (int) (rng.uniform() * 300), 1 + (int) (rng.uniform() * 160)}, {257, 3}};
        RankOneFold kernel = RankOneFold.on(run.backend());
        RankOneFold twin = new CpuRankOneFold();
        long mismatches = 0;
        StringBuilder failed = new StringBuilder();
        for (int[] shape : shapes) {
            int t = shape[0];
            int d = shape[1];
            double[] ck = rng.normals(t * d, 0.0, 1.0);
            double[] beta = rng.normals(t, 0.0, 3.0);
            double[] u = rng.normals(d, 0.0, 1.0);
            double[] out = kernel.fold(ck, beta, u, t, d);
            double[] expected = twin.fold(ck, beta, u, t, d);
            for (int i = 0; i < expected.length; i++) {
                mismatches += Double.doubleToRawLongBits(out[i]) == Double.doubleToRawLongBits(expected[i]) ? 0 : 1;
            }
            if (!Checks.bitIdentical(out, expected)) {
                failed.append(" t=").append(t).append(",d=").append(d);
            }
        }
        run.metric("fold_kernel_mismatches", mismatches);
        assertThat(failed.toString()).as("shapes where the fold kernel differs from its CPU twin (%s elements)",
                mismatches).isEmpty();
    }
}
