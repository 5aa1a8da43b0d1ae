package org.mechspec.foldbias;

import static org.mechspec.spec.Properties.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.List;
import java.util.function.Consumer;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.Rng;
import org.quicktheories.core.Gen;
import org.mechspec.spec.Stress;

/**
 * Generated fold-bias problems for the property halves: small sizes (d 1–16, n 1–48, t 1–n, 1–32 reference and
 * 1–8 test queries), ridge weight λ 1e-3..1, query spread 0..2, inputs from the pinned Rng. Every property also
 * runs a fixed list of degenerate problems (single key, single query, identical queries, t = n). QuickTheories
 * draws from the run's recorded property seed ({@link org.mechspec.spec.Properties}).
 */
final class FoldBiasProblems {
    static final int EXAMPLES = 60;
    /** The dropping-bias property's problems are larger (about 60 ms each). */
    static final int COMPACTING_EXAMPLES = 30;
    /** Arbitrary key sets the fidelity property compares each planted problem's compaction with. */
    static final int PLANTED_ARBITRARY_SELECTIONS = 4;
    /** Planted keys' length: an fp16 value, and L²/√d ≥ 1024 > 745, so every other key's weight is exactly 0. */
    static final double PLANTED_LENGTH = 64.0;

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

    /** The degenerate problems, then EXAMPLES generated ones. */
    static void forAllProblems(Consumer<Problem> property) {
        for (Problem p : DEGENERATE) {
            try {
                property.accept(p);
            } catch (AssertionError e) {
                throw new AssertionError("degenerate problem " + p + ": " + e.getMessage(), e);
            }
        }
        qt().withExamples(Stress.examples(EXAMPLES)).forAll(problems()).checkAssert(property);
    }

    /**
     * Problems that really compact, for the dropping-bias property: d 16–64, n 64–256, t n/16–n/4, 4t reference
     * queries (at most 256), 1–16 test queries, spread 0.25–1, λ 1e-3..1. On small problems (a handful of keys,
     * nearly identical queries) β can come out nearly constant, and dropping a constant bias is free (softmax is
     * shift-invariant): there the claim is not a property of the mechanism, and random draws do find such cases.
     */
    static Gen<Problem> compactingProblems() {
        return integers().between(16, 64).zip(integers().between(64, 256), doubles().between(0.0, 1.0),
                integers().between(1, 16), (d, n, share, mt) -> {
                    int t = n / 16 + (int) (share * (n / 4 - n / 16));
                    return new int[] {d, n, t, Math.min(4 * t, 256), mt};
                })
                .zip(doubles().between(0.25, 1.0), doubles().between(-3.0, 0.0), longs().between(0, 1_000_000),
                        (s, spread, logLambda, seed) -> new Problem(new FoldBiasConfig(s[0], s[1], s[2], s[3], s[4],
                                spread, StrictMath.pow(10.0, logLambda)), seed));
    }

    static void forAllCompactingProblems(Consumer<Problem> property) {
        qt().withExamples(Stress.examples(COMPACTING_EXAMPLES)).forAll(compactingProblems()).checkAssert(property);
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

    /** A planted problem and the seed its inputs were drawn from. */
    record Planted(FoldBiasInputs inputs, long seed) {
    }

    /**
     * Problems with a known best compaction, for the fidelity property: d 2–16, t 1–d planted keys L·e_c (c < t) at
     * random positions among n − t zero keys (n ≤ t + 32), r = 1–4 reference and 1–2 test queries per planted key,
     * query i of either set L·e_{i mod t} + noise·z (noise 0..0.5), values N(0,1). Every query's own planted key
     * outweighs every other key by a logit gap beyond 745, so the full attention is exactly that key's value, the
     * top-t keys are the planted ones, and any other t keys miss a planted key whose queries then see only keys
     * unrelated to them.
     */
    static Gen<Planted> plantedProblems() {
        return integers().between(2, 16).zip(integers().between(1, 16), integers().between(0, 32),
                integers().between(1, 4), integers().between(1, 2),
                (d, t, extra, r, rt) -> new int[] {d, Math.min(t, d), Math.min(t, d) + extra, r, rt})
                .zip(doubles().between(0.0, 0.5), longs().between(0, 1_000_000),
                        (s, noise, seed) -> new Planted(planted(s[0], s[1], s[2], s[3], s[4], noise, seed), seed));
    }

    static void forAllPlantedProblems(Consumer<Planted> property) {
        qt().withExamples(Stress.examples(EXAMPLES)).forAll(plantedProblems()).checkAssert(property);
    }

    private static FoldBiasInputs planted(int d, int t, int n, int perKey, int testPerKey, double noise, long seed) {
        Rng rng = new Rng(seed);
        int[] position = rng.permutation(n);
        double[] keys = new double[n * d];
        for (int c = 0; c < t; c++) {
            keys[position[c] * d + c] = PLANTED_LENGTH;
        }
        double[] reference = clusterQueries(rng, t * perKey, t, d, noise);
        double[] test = clusterQueries(rng, t * testPerKey, t, d, noise);
        double[] values = rng.normals(n * d, 0.0, 1.0);
        FoldBiasConfig c = new FoldBiasConfig(d, n, t, t * perKey, t * testPerKey, noise, 1e-3);
        return new FoldBiasInputs(c, reference, test, keys, values);
    }

    private static double[] clusterQueries(Rng rng, int count, int t, int d, double noise) {
        double[] q = new double[count * d];
        for (int i = 0; i < count; i++) {
            for (int k = 0; k < d; k++) {
                q[i * d + k] = (k == i % t ? PLANTED_LENGTH : 0.0) + noise * rng.normal();
            }
        }
        return q;
    }
}
