package org.mechspec.pnmix;

import org.mechspec.compute.OneBitLevels;

/**
 * The pinned pn-mix configuration (DESIGN §7) and the validation every variant passes through: a bad value
 * is rejected here, naming the field, before any cache is built.
 *
 * @param residualSize the residual is quantized once this many tokens wait in it, as residualSize / groupSize groups
 * @param valueGroupSize values are quantized per token over groups of min(valueGroupSize, headDim) channels
 * @param highRatio the share of each KV head's pairs that get {@code highBits}
 */
public record PnMixConfig(int vocab, int modelDim, int queryHeads, int kvHeads, int headDim, double ropeTheta,
                          PairLayout layout, int sinkTokens, int groupSize, int residualSize, double highRatio,
                          int highBits, int lowBits, int valueBits, int valueGroupSize, OneBitLevels oneBitLevels,
                          int prefillTokens, int decodeTokens) {

    public PnMixConfig {
        positive("vocab", vocab);
        positive("modelDim", modelDim);
        positive("queryHeads", queryHeads);
        positive("kvHeads", kvHeads);
        positive("headDim", headDim);
        positive("groupSize", groupSize);
        positive("residualSize", residualSize);
        positive("valueGroupSize", valueGroupSize);
        positive("prefillTokens", prefillTokens);
        if (sinkTokens < 0 || decodeTokens < 0) {
            throw new IllegalArgumentException("sinkTokens and decodeTokens must not be negative, got " + sinkTokens
                    + ", " + decodeTokens);
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
        if (layout == null || oneBitLevels == null) {
            throw new IllegalArgumentException("layout and oneBitLevels must be given");
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
        int vg = Math.min(valueGroupSize, headDim);
        if (headDim % vg != 0) {
            throw new IllegalArgumentException("value group of " + vg + " channels does not divide headDim " + headDim);
        }
        if (prefillTokens <= sinkTokens) {
            throw new IllegalArgumentException("saliency needs non-sink prefill tokens: prefillTokens " + prefillTokens
                    + " <= sinkTokens " + sinkTokens);
        }
    }

    /** The protocol of DESIGN §7 (seed file 002). */
    public static PnMixConfig pinned() {
        return new PnMixConfig(256, 256, 8, 2, 32, 10000.0, PairLayout.ADJACENT, 32, 128, 128, 0.5, 3, 1, 2, 128,
                OneBitLevels.CONDITIONAL_MEANS, 384, 64);
    }

    public int pairs() {
        return headDim / 2;
    }

    /** High pairs per KV head: round(highRatio · pairs), halves rounded up. */
    public int highPairsPerHead() {
        return (int) Math.floor(highRatio * pairs() + 0.5);
    }

    public int valueGroupChannels() {
        return Math.min(valueGroupSize, headDim);
    }

    public int kvChannels() {
        return kvHeads * headDim;
    }

    public int totalTokens() {
        return prefillTokens + decodeTokens;
    }

    public PnMixConfig withLayout(PairLayout l) {
        return new PnMixConfig(vocab, modelDim, queryHeads, kvHeads, headDim, ropeTheta, l, sinkTokens, groupSize,
                residualSize, highRatio, highBits, lowBits, valueBits, valueGroupSize, oneBitLevels, prefillTokens, decodeTokens);
    }

    public PnMixConfig withKeyBits(int high, int low) {
        return new PnMixConfig(vocab, modelDim, queryHeads, kvHeads, headDim, ropeTheta, layout, sinkTokens, groupSize,
                residualSize, highRatio, high, low, valueBits, valueGroupSize, oneBitLevels, prefillTokens, decodeTokens);
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
