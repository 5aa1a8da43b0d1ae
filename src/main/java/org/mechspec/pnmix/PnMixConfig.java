package org.mechspec.pnmix;

import org.mechspec.compute.OneBitLevels;

/**
 * The pinned pn-mix configuration (protocols.md, pn-mix) and the validation every variant passes through: a bad value
 * is rejected here, naming the field, before any cache is built.
 *
 * @param model the attention layer the cache serves
 * @param cache how the packed cache stores keys and values
 * @param tokens the token stream: prefill (from which saliency is computed), then decode steps
 */
public record PnMixConfig(Model model, CachePolicy cache, Tokens tokens) {

    /** The synthetic RoPE attention layer: embedding, grouped query heads, head dimension, RoPE pair layout. */
    public record Model(int vocab, int modelDim, int queryHeads, int kvHeads, int headDim, double ropeTheta, PairLayout layout) {
        public Model {
            String[] names = {"vocab", "modelDim", "queryHeads", "kvHeads", "headDim"};
            int[] sizes = {vocab, modelDim, queryHeads, kvHeads, headDim};
            for (int i = 0; i < names.length; i++) {
                positive(names[i], sizes[i]);
            }
            if (queryHeads % kvHeads != 0) {
                throw new IllegalArgumentException("queryHeads (" + queryHeads + ") must be a multiple of kvHeads (" + kvHeads + ")");
            }
            if (headDim % 2 != 0) {
                throw new IllegalArgumentException("headDim must be even to form RoPE pairs, got " + headDim);
            }
            if (!(ropeTheta > 1) || Double.isInfinite(ropeTheta)) {
                throw new IllegalArgumentException("ropeTheta must be finite and > 1, got " + ropeTheta);
            }
            if (layout == null) {
                throw new IllegalArgumentException("layout must be given");
            }
        }

        public int kvChannels() {
            return kvHeads * headDim;
        }

        public int pairs() {
            return headDim / 2;
        }

        Model withLayout(PairLayout l) {
            return new Model(vocab, modelDim, queryHeads, kvHeads, headDim, ropeTheta, l);
        }
    }

    /**
     * @param residualSize the residual is quantized once this many tokens wait in it, as residualSize / groupSize groups
     * @param highRatio the share of each KV head's pairs that get {@code highBits}
     * @param valueGroupSize values are quantized per token over groups of min(valueGroupSize, headDim) channels
     */
    public record CachePolicy(int sinkTokens, int groupSize, int residualSize, double highRatio, int highBits, int lowBits,
                              int valueBits, int valueGroupSize, OneBitLevels oneBitLevels) {
        public CachePolicy {
            if (sinkTokens < 0) {
                throw new IllegalArgumentException("sinkTokens must not be negative, got " + sinkTokens);
            }
            positive("groupSize", groupSize);
            positive("residualSize", residualSize);
            positive("valueGroupSize", valueGroupSize);
            if (oneBitLevels == null) {
                throw new IllegalArgumentException("oneBitLevels must be given");
            }
            bits("highBits", highBits);
            bits("lowBits", lowBits);
            bits("valueBits", valueBits);
            if (!(highRatio >= 0 && highRatio <= 1)) {
                throw new IllegalArgumentException("highRatio must be in [0, 1], got " + highRatio);
            }
            if (residualSize % groupSize != 0) {
                throw new IllegalArgumentException("groupSize " + groupSize + " does not divide residualSize " + residualSize);
            }
        }

        CachePolicy withKeyBits(int high, int low) {
            return new CachePolicy(sinkTokens, groupSize, residualSize, highRatio, high, low, valueBits, valueGroupSize, oneBitLevels);
        }
    }

    /** Prefill tokens (saliency is computed from them), then decode steps. */
    public record Tokens(int prefill, int decode) {
        public Tokens {
            positive("prefillTokens", prefill);
            if (decode < 0) {
                throw new IllegalArgumentException("decodeTokens must not be negative, got " + decode);
            }
        }
    }

    /** The checks that span two parts. */
    public PnMixConfig {
        if (model == null || cache == null || tokens == null) {
            throw new IllegalArgumentException("model, cache and tokens must be given");
        }
        int vg = Math.min(cache.valueGroupSize(), model.headDim());
        if (model.headDim() % vg != 0) {
            throw new IllegalArgumentException("value group of " + vg + " channels does not divide headDim " + model.headDim());
        }
        if (tokens.prefill() <= cache.sinkTokens()) {
            throw new IllegalArgumentException("saliency needs non-sink prefill tokens: prefillTokens " + tokens.prefill()
                    + " <= sinkTokens " + cache.sinkTokens());
        }
    }

    /** The protocol of protocols.md (pn-mix) (seed file 002). */
    public static PnMixConfig pinned() {
        return new PnMixConfig(new Model(256, 256, 8, 2, 32, 10000.0, PairLayout.ADJACENT),
                new CachePolicy(32, 128, 128, 0.5, 3, 1, 2, 128, OneBitLevels.CONDITIONAL_MEANS), new Tokens(384, 64));
    }

    /** High pairs per KV head: round(highRatio · pairs), halves rounded up. */
    public int highPairsPerHead() {
        return (int) Math.floor(cache.highRatio() * model.pairs() + 0.5);
    }

    public int valueGroupChannels() {
        return Math.min(cache.valueGroupSize(), model.headDim());
    }

    public int totalTokens() {
        return tokens.prefill() + tokens.decode();
    }

    public PnMixConfig withLayout(PairLayout l) {
        return new PnMixConfig(model.withLayout(l), cache, tokens);
    }

    public PnMixConfig withKeyBits(int high, int low) {
        return new PnMixConfig(model, cache.withKeyBits(high, low), tokens);
    }

    private static void positive(String name, int v) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + v);
        }
    }

    private static void bits(String name, int b) {
        if (b < 1 || b > 8) {
            throw new IllegalArgumentException(name + " must be 1..8 bits, got " + b);
        }
    }
}
