package org.mechspec.pnmix;

import org.mechspec.compute.BitPacking;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.compute.Rng;
import org.mechspec.spec.SeedRun;

/** Shared inputs of the pn-mix tests: the per-(backend, seed) protocol result, small configs, random rows. */
final class PnMixFixtures {

    private PnMixFixtures() {
    }

    /** The seed's experiment on the run's backend, computed once; records the dataset and runtime figures. */
    static PnMixExperiment experiment(SeedRun run) {
        PnMixExperiment e = run.shared("experiment", PnMixExperiment.class,
                () -> PnMixExperiment.run(run.seed(), run.backend()));
        run.dataset(HamletTokens.FILE, e.datasetSha256());
        run.runtime("device_kind", run.backend().name());
        run.runtime("accelerator_model", run.backend().device());
        run.runtime("elapsed_seconds", e.main().elapsedSeconds());
        run.runtime("peak_allocated_bytes", e.main().storage().peakAllocatedBytes());
        return e;
    }

    /** The seed artifact's per-run figures (the structural ones must match ours exactly). */
    static JsonNode seedRunMetrics() {
        // From the classpath (fixtures/seeds is a resource folder), so the GPU bundle finds it too.
        try (var in = PnMixFixtures.class.getClassLoader().getResourceAsStream("fixtures/seeds/pn-mix.002_9d6477e26dc5885a.json")) {
            JsonNode seed = new ObjectMapper().readTree(in);
            return seed.path("runs").get(0).path("metrics");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A small configuration for property runs (model dim 16, RoPE θ 10000, adjacent pairs, ratio 0.5). */
    static PnMixConfig small(int queryHeads, int kvHeads, int headDim, int sink, int group, int prefill, int decode,
                             int highBits, int lowBits, int valueBits) {
        return new PnMixConfig(new PnMixConfig.Model(256, 16, queryHeads, kvHeads, headDim, 10000.0, PairLayout.ADJACENT),
                new PnMixConfig.CachePolicy(sink, group, group, 0.5, highBits, lowBits, valueBits, 128, OneBitLevels.CONDITIONAL_MEANS), new PnMixConfig.Tokens(prefill, decode));
    }

    /** fp16 rows of N(0, std²) values, [tokens][channels]. */
    static double[] halfRows(Rng rng, int tokens, int channels, double std) {
        double[] x = rng.normals(tokens * channels, 0.0, std);
        for (int i = 0; i < x.length; i++) {
            x[i] = HalfFloat.roundToHalf(x[i]);
        }
        return x;
    }

    /** A cache of {@code tokens} random fp16 rows appended through the mechanism on the CPU. */
    static StreamingCache filledCache(PnMixConfig c, int[] keyBits, byte[] mask, int tokens, long seed, double[][] truthOut) {
        return filledCache(c, new CpuPackedCacheOps(), keyBits, mask, tokens, seed, truthOut);
    }

    /** The same through the given packed-cache operations (the run's, for a property judging them). */
    static StreamingCache filledCache(PnMixConfig c, PackedCacheOps ops, int[] keyBits, byte[] mask, int tokens, long seed,
                                      double[][] truthOut) {
        StreamingCache cache = new StreamingCache(c, ops, keyBits, mask);
        Rng rng = new Rng(seed);
        double[] k = halfRows(rng, tokens, c.model().kvChannels(), 1.0);
        double[] v = halfRows(rng, tokens, c.model().kvChannels(), 1.0);
        for (int t = 0; t < tokens; t++) {
            cache.append(Projections.row(k, c.model().kvChannels(), t), Projections.row(v, c.model().kvChannels(), t));
        }
        if (truthOut != null) {
            truthOut[0] = k;
            truthOut[1] = v;
        }
        return cache;
    }

    /** A random mask with the config's ratio. */
    static PairMask randomMask(PnMixConfig c, long seed) {
        return RandomMasks.draw(new Rng(seed), 1, c.model().kvHeads(), c.model().pairs(), c.highPairsPerHead())[0];
    }

    /** Random byte tokens (printable ASCII), for runs that must not depend on the data set. */
    static byte[] syntheticTokens(long seed, int n) {
        Rng rng = new Rng(seed);
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (32 + (int) (rng.uniform() * 95));
        }
        return b;
    }

    /** The protocol's truth for synthetic tokens, drawn like the seeded run. */
    static Projections syntheticTruth(PnMixConfig c, long seed, PairLayout ropeLayout) {
        return new RandomRopeLayer(new Rng(seed), c, ropeLayout).project(syntheticTokens(seed + 1, c.totalTokens()));
    }

    /** A mask of {@code kvHeads} × {@code pairs} with the given flat indices (h·pairs + p) high. */
    static PairMask mask(int kvHeads, int pairs, int... high) {
        boolean[] flags = new boolean[kvHeads * pairs];
        for (int i : high) {
            flags[i] = true;
        }
        return PairMask.of(kvHeads, pairs, flags);
    }

    /** The fp16 bytes of x, as the cache stores rows. */
    static byte[] halfs(double... x) {
        byte[] b = new byte[2 * x.length];
        for (int i = 0; i < x.length; i++) {
            BitPacking.putHalf(b, 2 * i, HalfFloat.toHalfBits(x[i]));
        }
        return b;
    }
}
