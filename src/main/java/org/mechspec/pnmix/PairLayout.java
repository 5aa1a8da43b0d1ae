package org.mechspec.pnmix;

/** Which channels of a head form RoPE pair p (of d/2 pairs). */
public enum PairLayout {
    /** Pair p = channels (2p, 2p+1): the layout of the pinned protocol. */
    ADJACENT,
    /** Pair p = channels (p, p + d/2): the "rotate half" layout. */
    HALF_SPLIT;

    public int first(int pair, int headDim) {
        return this == ADJACENT ? 2 * pair : pair;
    }

    public int second(int pair, int headDim) {
        return this == ADJACENT ? 2 * pair + 1 : pair + headDim / 2;
    }

    /** The pair a channel belongs to. */
    public int pairOf(int channel, int headDim) {
        return this == ADJACENT ? channel / 2 : channel % (headDim / 2);
    }
}
