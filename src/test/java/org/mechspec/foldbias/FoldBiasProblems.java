package org.mechspec.foldbias;

import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.List;
import java.util.function.Consumer;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.Rng;
import org.quicktheories.core.Gen;

/**
 * Generated fold-bias problems for the property halves: small sizes (d 1–16, n 1–48, t 1–n, 1–32 reference and
 * 1–8 test queries), ridge weight λ 1e-3..1, query spread 0..2, inputs from the pinned Rng. Every property also
 * runs a fixed list of degenerate problems (single key, single query, identical queries, t = n).
 */
final class FoldBiasProblems {
    static final int EXAMPLES = 60;
    private static final long QT_SEED = 0x5EED_F01DL;

    /** One problem: sizes and the seed its inputs are drawn from. */
    record Problem(FoldBiasConfig config, long seed) {
        FoldBiasInputs inputs() {
            return FoldBiasInputs.draw(config, seed);
        }

        FoldBiasRun run() {
            return new FoldBias(CpuBackend.INSTANCE).run(inputs());
        }
    }

    static final List<Problem> DEGENERATE = List.of(
            new Problem(new FoldBiasConfig(1, 1, 1, 1, 1, 0.0, 1e-3), 1),
            new Problem(new FoldBiasConfig(1, 2, 1, 1, 1, 0.5, 1e-3), 2),
            new Problem(new FoldBiasConfig(16, 3, 3, 1, 2, 0.5, 1e-3), 3),
            new Problem(new FoldBiasConfig(8, 24, 6, 12, 4, 0.0, 1e-3), 4),
            new Problem(new FoldBiasConfig(16, 48, 48, 32, 8, 2.0, 1.0), 5),
            new Problem(new FoldBiasConfig(2, 40, 1, 32, 8, 1.0, 1e-3), 6));

    private FoldBiasProblems() {
    }

    static Gen<Problem> problems() {
        Gen<FoldBiasConfig> configs = integers().between(1, 16).zip(integers().between(1, 48),
                integers().between(1, 48), integers().between(1, 32), integers().between(1, 8),
                (d, n, t, m, mt) -> new int[] {d, n, Math.min(t, n), m, mt})
                .zip(doubles().between(0.0, 2.0), doubles().between(-3.0, 0.0),
                        (s, spread, logLambda) -> new FoldBiasConfig(s[0], s[1], s[2], s[3], s[4], spread,
                                StrictMath.pow(10.0, logLambda)));
        return configs.zip(longs().between(0, 1_000_000), Problem::new);
    }

    /** The degenerate problems, then EXAMPLES generated ones (fixed QuickTheories seed: the build is repeatable). */
    static void forAllProblems(Consumer<Problem> property) {
        for (Problem p : DEGENERATE) {
            try {
                property.accept(p);
            } catch (AssertionError e) {
                throw new AssertionError("degenerate problem " + p + ": " + e.getMessage(), e);
            }
        }
        qt().withFixedSeed(QT_SEED).withExamples(EXAMPLES).forAll(problems()).checkAssert(property);
    }

    /** Problems that compact at least 2x (t ≤ n/2, n ≥ 2), for the dropping-bias property. */
    static void forAllCompactingProblems(Consumer<Problem> property) {
        Gen<Problem> compacting = problems().map(p -> {
            FoldBiasConfig c = p.config();
            int n = Math.max(2, c.n());
            int t = Math.max(1, Math.min(c.t(), n / 2));
            return new Problem(new FoldBiasConfig(c.d(), n, t, c.referenceQueries(), c.testQueries(),
                    c.querySpread(), c.lambda()), p.seed());
        });
        qt().withFixedSeed(QT_SEED).withExamples(EXAMPLES).forAll(compacting).checkAssert(property);
    }

    /**
     * The problem's inputs with test queries replaced by queries on the fold's exact subspace A·u = 1:
     * q = √d·u/‖u‖² + spread·(z − (z·u)·u/‖u‖²), z ~ N(0, I) from Rng(seed + 1). The offline part of the run
     * does not read the test queries, so u is the same in a rerun with these inputs.
     */
    static FoldBiasInputs onFoldSubspace(Problem p, double[] u) {
        FoldBiasInputs in = p.inputs();
        FoldBiasConfig c = p.config();
        int d = c.d();
        double uu = 0.0;
        for (double x : u) {
            uu += x * x;
        }
        Rng rng = new Rng(p.seed() + 1);
        double[] queries = new double[c.testQueries() * d];
        for (int i = 0; i < c.testQueries(); i++) {
            double[] z = rng.normals(d, 0.0, 1.0);
            double zu = 0.0;
            for (int k = 0; k < d; k++) {
                zu += z[k] * u[k];
            }
            for (int k = 0; k < d; k++) {
                queries[i * d + k] = Math.sqrt(d) * u[k] / uu + c.querySpread() * (z[k] - zu * u[k] / uu);
            }
        }
        return new FoldBiasInputs(c, in.referenceQueries(), queries, in.keys(), in.values());
    }
}
