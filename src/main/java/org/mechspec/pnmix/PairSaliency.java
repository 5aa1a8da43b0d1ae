package org.mechspec.pnmix;

/**
 * Pair saliency: score(h, p) = mean_t ‖k_t,h,p‖ × mean_{t, query heads of group h} ‖q_t,p‖ over tokens
 * [from, to) of the fp16 truth; the top {@code highPerHead} pairs of each KV head are high (ties → lower
 * index). Computed once, from the non-sink prefill tokens, in the protocol.
 */
public final class PairSaliency {
    private PairSaliency() {
    }

    /** Scores [kvHead][pair]. */
    public static double[] scores(Projections p, int from, int to, PairLayout layout) {
        if (from < 0 || to > p.tokens() || from >= to) {
            throw new IllegalArgumentException("saliency needs tokens: range [" + from + ", " + to + ") of " + p.tokens());
        }
        int d = p.headDim();
        int pairs = d / 2;
        int group = p.queryHeads() / p.kvHeads();
        int n = to - from;
        double[] scores = new double[p.kvHeads() * pairs];
        for (int h = 0; h < p.kvHeads(); h++) {
            for (int pair = 0; pair < pairs; pair++) {
                double kSum = 0.0;
                for (int t = from; t < to; t++) {
                    kSum += PairLayoutRope.pairNorm(p.k(), t * p.kvWidth(), h, d, pair, layout);
                }
                double qSum = 0.0;
                for (int qh = h * group; qh < (h + 1) * group; qh++) {
                    for (int t = from; t < to; t++) {
                        qSum += PairLayoutRope.pairNorm(p.q(), t * p.qWidth(), qh, d, pair, layout);
                    }
                }
                scores[h * pairs + pair] = (kSum / n) * (qSum / ((double) n * group));
            }
        }
        return scores;
    }

    /** The top {@code highPerHead} pairs per head (ties → lower index). */
    public static PairMask select(double[] scores, int kvHeads, int pairs, int highPerHead) {
        if (highPerHead < 0 || highPerHead > pairs) {
            throw new IllegalArgumentException("high pairs per head must be 0.." + pairs + ", got " + highPerHead);
        }
        boolean[] high = new boolean[kvHeads * pairs];
        for (int h = 0; h < kvHeads; h++) {
            for (int k = 0; k < highPerHead; k++) {
                int best = -1;
                for (int p = 0; p < pairs; p++) {
                    int i = h * pairs + p;
                    if (high[i]) {
                        continue;
                    }
                    // strict comparison keeps the lower index on ties
                    if (best < 0 || scores[i] > scores[best]) {
                        best = i;
                    }
                }
                high[best] = true;
            }
        }
        return PairMask.of(kvHeads, pairs, high);
    }
}
