package org.mechspec.oal;

import java.util.Arrays;
import java.util.Comparator;

/**
 * Outlier-aware grouping of one query head's dimensions (protocols.md, OAL): contribution c_i = mean_t|q_t,i|·mean_t|k_t,i|
 * over the grouping blocks (post-RoPE; k from the head's KV head); dimensions sorted by c descending, ties to the
 * lower index; the first ⌈d/16⌉ form group 1 (outliers), the next ⌈3d/16⌉ group 2, the rest group 0.
 */
final class Grouping {
    static final int GROUPS = 3;
    static final int REST = 0;
    static final int OUTLIERS = 1;
    static final int SECONDARY = 2;

    private Grouping() {
    }

    static int outlierCount(int headDim) {
        return (headDim + 15) / 16;
    }

    static int secondaryCount(int headDim) {
        return (3 * headDim + 15) / 16;
    }

    /** Throws when the rule leaves group 0 empty (head dimensions below 3). */
    static void requireSplittable(int headDim) {
        int outliers = outlierCount(headDim);
        int secondary = secondaryCount(headDim);
        if (headDim < 1 || outliers + secondary >= headDim) {
            throw new IllegalArgumentException("head dimension " + headDim + " cannot be split into the 3 OAL groups: "
                    + "⌈d/16⌉ = " + outliers + " outlier and ⌈3d/16⌉ = " + secondary
                    + " secondary dimensions leave no dimension for group 0");
        }
    }

    /** c_i per head ([heads, headDim]), means over every token of every block in fixed order. */
    static double[] contributions(LayerSamples s) {
        int d = s.headDim();
        double[] c = new double[s.heads() * d];
        int tokens = s.blocks() * s.seqLen();
        for (int h = 0; h < s.heads(); h++) {
            int g = s.kvHeadOf(h);
            for (int i = 0; i < d; i++) {
                double q = 0.0;
                double k = 0.0;
                for (int b = 0; b < s.blocks(); b++) {
                    for (int t = 0; t < s.seqLen(); t++) {
                        q += Math.abs(s.q()[s.queryOffset(b, t, h) + i]);
                        k += Math.abs(s.k()[s.kvOffset(b, t, g) + i]);
                    }
                }
                c[h * d + i] = (q / tokens) * (k / tokens);
            }
        }
        return c;
    }

    /** Group of every dimension of every head ([heads, headDim]). */
    static int[] assign(double[] contributions, int heads, int headDim) {
        requireSplittable(headDim);
        if (contributions.length != heads * headDim) {
            throw new IllegalArgumentException(contributions.length + " contributions for " + heads + " heads of dim " + headDim);
        }
        int[] groups = new int[heads * headDim];
        for (int h = 0; h < heads; h++) {
            int[] ranked = ranking(Arrays.copyOfRange(contributions, h * headDim, (h + 1) * headDim));
            for (int r = 0; r < headDim; r++) {
                int group = r < outlierCount(headDim) ? OUTLIERS
                        : r < outlierCount(headDim) + secondaryCount(headDim) ? SECONDARY : REST;
                groups[h * headDim + ranked[r]] = group;
            }
        }
        return groups;
    }

    /** Dimension indices by contribution, descending; ties to the lower index. */
    static int[] ranking(double[] c) {
        for (int i = 0; i < c.length; i++) {
            if (!Double.isFinite(c[i])) {
                throw new IllegalArgumentException("contribution of dimension " + i + " is " + c[i]
                        + ": grouping needs finite activations");
            }
        }
        Comparator<Integer> byContribution = Comparator.comparingDouble((Integer i) -> c[i]).reversed();
        Integer[] idx = new Integer[c.length];
        for (int i = 0; i < idx.length; i++) {
            idx[i] = i;
        }
        Arrays.sort(idx, byContribution.thenComparing(Comparator.naturalOrder()));
        return Arrays.stream(idx).mapToInt(Integer::intValue).toArray();
    }

    /** The global baseline's grouping: every dimension in one group (G = 1). */
    static int[] global(int heads, int headDim) {
        return new int[heads * headDim];
    }
}
