package org.mechspec.pnmix;

import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;

/**
 * What the seed's stream must produce (rng.md and §7), drawn again here apart from {@link RandomRopeLayer} and
 * {@link RandomMasks}: E, W_q, W_k, W_v in that order, row-major, N(0,1), the W times 1/√modelDim; then, per random
 * mask and KV head, a Fisher–Yates shuffle from the end of 0..pairs−1 (j = ⌊u·(i+1)⌋) whose first k entries are
 * the high pairs. Both are pinned to the bit, so the comparisons are exact.
 */
public final class StreamChecks {
    private StreamChecks() {
    }

    /** E, W_q, W_k, W_v drawn from {@code rng}, which then stands right after W_v. */
    static double[][] layer(Rng rng, PnMixConfig c) {
        double s = 1.0 / StrictMath.sqrt(c.model().modelDim());
        double[] e = draw(rng, c.model().vocab() * c.model().modelDim(), 1.0);
        double[] wq = draw(rng, c.model().modelDim() * c.model().queryHeads() * c.model().headDim(), s);
        double[] wk = draw(rng, c.model().modelDim() * c.model().kvHeads() * c.model().headDim(), s);
        double[] wv = draw(rng, c.model().modelDim() * c.model().kvHeads() * c.model().headDim(), s);
        return new double[][] {e, wq, wk, wv};
    }

    private static double[] draw(Rng rng, int n, double scale) {
        double[] a = new double[n];
        for (int i = 0; i < n; i++) {
            a[i] = rng.normal() * scale;
        }
        return a;
    }

    /**
     * Elements of q and k before RoPE (fp64) and of the fp16 v that differ bitwise from E[token]·W summed over the
     * model dim in ascending order, with E and W drawn from Rng(seed).
     */
    public static long projectionMismatches(Projections p, byte[] tokens, long seed, PnMixConfig c) {
        double[][] w = layer(new Rng(seed), c);
        int dm = c.model().modelDim();
        long bad = 0;
        for (int t = 0; t < tokens.length; t++) {
            int row = (tokens[t] & 0xFF) * dm;
            bad += rowMismatches(w[0], row, dm, w[1], p.qPreRope(), t * p.qWidth(), p.qWidth(), false);
            bad += rowMismatches(w[0], row, dm, w[2], p.kPreRope(), t * p.kvWidth(), p.kvWidth(), false);
            bad += rowMismatches(w[0], row, dm, w[3], p.v(), t * p.kvWidth(), p.kvWidth(), true);
        }
        return bad + Math.abs(p.tokens() - tokens.length);
    }

    private static long rowMismatches(double[] e, int row, int dm, double[] w, double[] got, int at, int cols, boolean fp16) {
        long bad = 0;
        for (int j = 0; j < cols; j++) {
            double s = 0.0;
            for (int m = 0; m < dm; m++) {
                s += e[row + m] * w[m * cols + j];
            }
            double want = fp16 ? HalfFloat.roundToHalf(s) : s;
            bad += Double.doubleToRawLongBits(want) == Double.doubleToRawLongBits(got[at + j]) ? 0 : 1;
        }
        return bad;
    }

    /** Flags of {@code masks} that differ from the definition's masks drawn from the stream of Rng(seed) after W_v. */
    public static long randomMaskMismatches(PairMask[] masks, long seed, PnMixConfig c) {
        Rng rng = new Rng(seed);
        layer(rng, c);
        return randomMaskMismatches(masks, rng, c.model().kvHeads(), c.model().pairs(), c.highPairsPerHead());
    }

    /** Flags of {@code masks} that differ from the definition's masks drawn from {@code rng} as it stands. */
    public static long randomMaskMismatches(PairMask[] masks, Rng rng, int kvHeads, int pairs, int highPerHead) {
        long bad = 0;
        for (PairMask mask : masks) {
            if (mask.kvHeads() != kvHeads || mask.pairs() != pairs) {
                return Long.MAX_VALUE;
            }
            for (int h = 0; h < kvHeads; h++) {
                int[] perm = new int[pairs];
                for (int i = 0; i < pairs; i++) {
                    perm[i] = i;
                }
                for (int i = pairs - 1; i >= 1; i--) {
                    int j = (int) (rng.uniform() * (i + 1));
                    int tmp = perm[i];
                    perm[i] = perm[j];
                    perm[j] = tmp;
                }
                boolean[] high = new boolean[pairs];
                for (int k = 0; k < highPerHead; k++) {
                    high[perm[k]] = true;
                }
                for (int p = 0; p < pairs; p++) {
                    bad += mask.high(h, p) == high[p] ? 0 : 1;
                }
            }
        }
        return bad;
    }
}
