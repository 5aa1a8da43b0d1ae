package org.mechspec.oal;

import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import org.mechspec.compute.Rng;
import org.quicktheories.core.Gen;

/**
 * Property-half inputs for OAL's two forms (dense and recurrent), in the adversarial regimes a causal grouped-quadratic
 * attention can carry (no bias and no Tq ≠ Tk: its rows are the sequence's own tokens): similarities of magnitude
 * ~1e6 and more, keys that dominate every row they reach, exact ties. Sequence lengths sit at and around the CUDA
 * kernels' thread counts (32 to 256 threads over max(T, d)) past the seeded 32 and 37 tokens; head dims from 3 (the
 * smallest the three groups split) to 256, GQA ratios 1–8. A recurrent state holds 1 + d + d(d+1)/2 features per value
 * channel, so long sequences come with small head dims: each example stays within a budget of multiply-adds.
 * Shrinking moves towards the ordinary regime and the smallest sizes.
 */
final class OalRegimes {
    private static final int[] LENGTHS = {1, 2, 3, 15, 16, 17, 31, 32, 33, 37, 63, 64, 65, 127, 128, 129, 255, 256, 257};
    private static final int[] DIMS = {3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256};
    /** Multiply-adds per example over both forms and the oracle (its error bound included). */
    static final long BUDGET = 40_000_000;

    private OalRegimes() {
    }

    enum Regime {
        ORDINARY("ordinary: q, k ~ N(0, 0.8²), v ~ N(0, 1)"),
        LARGE("large similarities: q, k ~ N(0, 30²), so each group's q·k/√d reaches ~1e3 and a similarity ~1e6"),
        DOMINANT_KEYS("key 0 and every 37th key scaled by 40: their similarities outweigh the rest of every row"),
        TIES("exact ties: every query zero, so every key a row sees gets the same similarity (ε + M₀₀)");

        final String description;

        Regime(String description) {
            this.description = description;
        }
    }

    /** One case: the samples (q, k, v), the grouping and the factors L of every head. */
    record Case(Regime regime, LayerSamples samples, int[] groups, double[][] factors) {
        @Override
        public String toString() {
            LayerSamples s = samples;
            return regime + " B=" + s.blocks() + " T=" + s.seqLen() + " H=" + s.heads() + " Hkv=" + s.kvHeads() + " d=" + s.headDim();
        }
    }

    static Gen<Case> cases() {
        return cases(BUDGET);
    }

    /** As {@link #cases()}, within {@code budget} multiply-adds per example (a slower backend: the emulated driver). */
    static Gen<Case> cases(long budget) {
        return integers().between(0, Regime.values().length - 1).zip(integers().between(0, LENGTHS.length - 1),
                integers().between(0, DIMS.length - 1), integers().between(1, 8), longs().all(),
                (r, t, d, ratio, seed) -> build(Regime.values()[r], LENGTHS[t], d, ratio, seed, budget)).describedAs(Case::toString);
    }

    static Case build(Regime regime, int seqLen, int dimIndex, int ratio, long seed, long budget) {
        int headDim = DIMS[dimIndex];
        int kv = 1 + (int) Math.floorMod(seed, 2L);
        int heads = kv * ratio;
        int t = seqLen;
        // Over budget: fewer KV heads first (the GQA ratio is kept), then a shorter sequence, then a smaller head dim.
        while (cost(t, heads, headDim) > budget && kv > 1) {
            kv--;
            heads = kv * ratio;
        }
        while (cost(t, heads, headDim) > budget && t > 1) {
            t = Math.max(1, t / 2);
        }
        while (cost(t, heads, headDim) > budget && dimIndex > 0) {
            headDim = DIMS[--dimIndex];
        }
        double scale = regime == Regime.LARGE ? 30 : 0.8;
        LayerSamples s = TinyOal.samples(seed, 1, t, heads, kv, headDim, scale);
        switch (regime) {
            case DOMINANT_KEYS -> {
                double[] k = s.k();
                for (int j = 0; j < t; j += 37) {
                    for (int i = j * kv * headDim; i < (j + 1) * kv * headDim; i++) {
                        k[i] *= 40;
                    }
                }
            }
            case TIES -> java.util.Arrays.fill(s.q(), 0.0);
            default -> {
            }
        }
        Rng rng = new Rng(seed ^ 0x5DEECE66DL);
        int[] groups = TinyOal.groups(rng, heads, headDim);
        return new Case(regime, s, groups, TinyOal.factors(rng, heads, Grouping.GROUPS, 0.1));
    }

    /** Multiply-adds: the recurrent form's state updates and reads, the dense form's and the oracle's pairs. */
    private static long cost(int t, int heads, int d) {
        long features = 1 + d + (long) d * (d + 1) / 2;
        return heads * (2L * t * features * d + 3L * t * t * (d + 16));
    }
}
