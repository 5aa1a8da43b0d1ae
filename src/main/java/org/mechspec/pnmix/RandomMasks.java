package org.mechspec.pnmix;

import org.mechspec.compute.Rng;

/** Random pair masks of a given ratio: per mask, per KV head, the first k pairs of an Rng permutation are high. */
public final class RandomMasks {
    private RandomMasks() {
    }

    public static PairMask[] draw(Rng rng, int count, int kvHeads, int pairs, int highPerHead) {
        PairMask[] out = new PairMask[count];
        for (int m = 0; m < count; m++) {
            boolean[] high = new boolean[kvHeads * pairs];
            for (int h = 0; h < kvHeads; h++) {
                int[] perm = rng.permutation(pairs);
                for (int k = 0; k < highPerHead; k++) {
                    high[h * pairs + perm[k]] = true;
                }
            }
            out[m] = PairMask.of(kvHeads, pairs, high);
        }
        return out;
    }
}
