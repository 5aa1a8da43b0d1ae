package org.mechspec.pnmix;

import static org.quicktheories.generators.SourceDSL.booleans;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.compute.Rng;
import org.mechspec.spec.AttentionRegimes;
import org.quicktheories.core.Gen;

/**
 * Property-half inputs for pn-mix's packed attention, in the adversarial regimes of {@link AttentionRegimes} that a
 * packed cache can carry (it has no bias; causal masking is its only mask): logits to ~1e3, sink keys that dominate
 * every row by ~500, every logit of a row shifted by ~+800, exact ties. Token counts sit at and around the cache's
 * boundaries (sink, group, residual flush) and the kernels' tiles, past the pinned 448 tokens; head dims 2–256, GQA
 * ratios 1–8, Tq ≠ Tk, causal or not, bit widths 1–8. The cache is built through the implementation's own quantizers,
 * and the oracle's keys and values are what its own dequantize reads back from it.
 * Shrinking moves towards the ordinary regime and the smallest sizes.
 */
final class PackedAttentionRegimes {
    private static final int[] SINKS = {0, 1, 5};
    private static final int[] GROUPS = {16, 32};
    /** Offsets from the sink: around one, two and three groups of 16 or 32, the kernels' 64/128/256-key tiles, 448. */
    private static final int[] TOKENS_PAST_SINK = {1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 95, 96, 97, 127, 128,
            129, 255, 256, 257, 447, 448, 449, 511, 512, 513};
    private static final int[] DIMS = {2, 4, 6, 8, 14, 16, 18, 30, 32, 34, 62, 64, 66, 126, 128, 130, 254, 256};
    private static final int[] QUERIES = {1, 2, 3, 7, 15, 16, 17};
    /** Multiply-adds of the oracle per example: larger shapes give up query rows, then KV heads. */
    static final long BUDGET = 3_000_000;
    /**
     * A kernel may dequantize in its own order (scale·code + zero, fused or not): at most two roundings of terms no
     * larger than 3·max|x| (the zero and the level are within the group's range), so 6 unit roundoffs of max|x|.
     */
    static final double DEQUANTIZE_ROUNDINGS = 6;

    private PackedAttentionRegimes() {
    }

    enum Regime {
        ORDINARY("ordinary: q, k, v ~ N(0, 1)"),
        LARGE_LOGITS("logits of magnitude up to ~1e3: q, k ~ N(0, 30²) (k in fp16)"),
        SINK_DOMINANT("sink keys (and every 37th key) dominate every row by ~+500 on channel 0"),
        ROW_SHIFTED_UP("every logit of a row shifted by ~+800 (channel 0 of every key ≈ 100): exp overflows without the max shift"),
        TIES("exact ties: every query row zero, so every visible key gets the same weight");

        final String description;

        Regime(String description) {
            this.description = description;
        }
    }

    /** One drawn case before its cache is built: the sizes, the regime and the seed of its values. */
    record Draw(Regime regime, int kvHeads, int group, int headDim, int sink, int groupTokens, int tokens, int queries,
                boolean causal, long seed) {
        @Override
        public String toString() {
            return regime + " Hq=" + kvHeads * group + " Hkv=" + kvHeads + " D=" + headDim + " sink=" + sink + " group=" + groupTokens
                    + " Tk=" + tokens + " Tq=" + queries + " causal=" + causal + " seed=" + seed;
        }
    }

    /** A built case: the cache in the implementation's layout, q, and the oracle's inputs (head-major k, v as read back). */
    record Case(Draw draw, PnMixConfig config, PackedKvCache cache, double[] q, double[] k, double[] v) {
        AttentionShape shape() {
            return AttentionShape.of(1, config.model().queryHeads(), config.model().kvHeads(), draw.queries(), draw.tokens(),
                    config.model().headDim(), config.model().headDim(), draw.causal());
        }

        /** The forward error bound of a correct computation at unit roundoff u (its dequantization included). */
        double bound(double[] q, double u) {
            return AttentionRegimes.errorBound(shape(), q, k, v, null, u, DEQUANTIZE_ROUNDINGS * u);
        }

        @Override
        public String toString() {
            return draw + ", bits high/low/value " + config.cache().highBits() + "/" + config.cache().lowBits() + "/"
                    + config.cache().valueBits() + ", max |logit| " + String.format("%.4g", AttentionRegimes.maxAbsLogit(shape(), q, k, null));
        }
    }

    static Gen<Draw> draws() {
        return draws(BUDGET);
    }

    /** As {@link #draws()}, within {@code budget} multiply-adds per example (a slower backend: the emulated driver). */
    static Gen<Draw> draws(long budget) {
        Gen<int[]> sizes = integers().between(0, Regime.values().length - 1).zip(integers().between(0, TOKENS_PAST_SINK.length - 1),
                integers().between(0, DIMS.length - 1), integers().between(0, QUERIES.length - 1), (r, n, d, tq) -> new int[] {r, n, d, tq});
        Gen<int[]> layout = integers().between(1, 3).zip(integers().between(1, 8), integers().between(0, SINKS.length - 1),
                integers().between(0, GROUPS.length - 1), (kv, g, s, gt) -> new int[] {kv, g, s, gt});
        return sizes.zip(layout, booleans().all(), longs().all(), (z, l, causal, seed) -> draw(z, l, causal, seed, budget)).describedAs(Draw::toString);
    }

    private static Draw draw(int[] z, int[] l, boolean causal, long seed, long budget) {
        int sink = SINKS[l[2]];
        int tokens = sink + TOKENS_PAST_SINK[z[1]];
        int d = DIMS[z[2]];
        int kv = l[0];
        int group = l[1];
        int tq = causal ? Math.min(QUERIES[z[3]], tokens) : QUERIES[z[3]];
        while ((long) kv * group * tq * tokens * 2L * d > budget && tq > 1) {
            tq = Math.max(1, tq / 2);
        }
        while ((long) kv * group * tq * tokens * 2L * d > budget && kv > 1) {
            kv--;
        }
        return new Draw(Regime.values()[z[0]], kv, group, d, sink, GROUPS[l[3]], tokens, tq, causal, seed);
    }

    /** Builds the case's cache through {@code owner}'s quantizers and reads it back through its dequantizers. */
    static Case build(Draw w, PackedCacheOps owner) {
        Rng rng = new Rng(w.seed());
        int d = w.headDim();
        PnMixConfig c = new PnMixConfig(
                new PnMixConfig.Model(256, 16, w.kvHeads() * w.group(), w.kvHeads(), d, 10000.0, PairLayout.ADJACENT),
                new PnMixConfig.CachePolicy(w.sink(), w.groupTokens(), w.groupTokens(), 0.5, 1 + (int) (rng.uniform() * 8),
                        1 + (int) (rng.uniform() * 8), 1 + (int) (rng.uniform() * 8), d <= 128 ? d : d % 128 == 0 ? 128 : d,
                        OneBitLevels.CONDITIONAL_MEANS),
                new PnMixConfig.Tokens(40, 0));
        PairMask mask = RandomMasks.draw(rng, 1, c.model().kvHeads(), c.model().pairs(), c.highPairsPerHead())[0];
        StreamingCache cache = new StreamingCache(c, owner,
                mask.channelBits(d, c.model().layout(), c.cache().highBits(), c.cache().lowBits()), mask.bytes());
        int channels = c.model().kvChannels();
        double keyStd = w.regime() == Regime.LARGE_LOGITS ? 30 : 1;
        for (int t = 0; t < w.tokens(); t++) {
            double[] k = rng.normals(channels, 0, keyStd);
            double[] v = rng.normals(channels, 0, 1);
            for (int h = 0; h < c.model().kvHeads(); h++) {
                switch (w.regime()) {
                    case SINK_DOMINANT -> k[h * d] = t < w.sink() || t % 37 == 0 ? 50 : k[h * d];
                    case ROW_SHIFTED_UP -> k[h * d] += 100;
                    default -> {
                    }
                }
            }
            cache.append(toHalf(k), toHalf(v));
        }
        int rows = c.model().queryHeads() * w.queries();
        double[] q = rng.normals(rows * d, 0, keyStd);
        for (int row = 0; row < rows; row++) {
            switch (w.regime()) {
                // scale·q₀·k₀ = q₀·50/√d ≈ +500 for a dominant key; q₀·100/√d ≈ +800 for every key
                case SINK_DOMINANT -> q[row * d] = 10 * Math.sqrt(d);
                case ROW_SHIFTED_UP -> q[row * d] = 8 * Math.sqrt(d);
                case TIES -> java.util.Arrays.fill(q, row * d, (row + 1) * d, 0.0);
                default -> {
                }
            }
        }
        PackedKvCache view = cache.view();
        double[] k = CacheContents.headMajor(CacheContents.keys(view, owner), w.tokens(), c.model().kvHeads(), d);
        double[] v = CacheContents.headMajor(CacheContents.values(view, owner), w.tokens(), c.model().kvHeads(), d);
        return new Case(w, c, view, q, k, v);
    }

    private static double[] toHalf(double[] x) {
        for (int i = 0; i < x.length; i++) {
            x[i] = HalfFloat.roundToHalf(x[i]);
        }
        return x;
    }
}
