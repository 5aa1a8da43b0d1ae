package org.mechspec.foldbias;

/** Which t of the n keys a compaction keeps, read off the attention weights over the reference queries. */
@FunctionalInterface
interface KeySelector {
    /** The protocol's rule (DESIGN §6): the t keys with the largest max weight, in index order. */
    KeySelector TOP_BY_MAX_WEIGHT = KeySelection::topByMaxWeight;

    /**
     * @param weights attention weights [queries, keys]
     * @return t distinct key indices in increasing order
     */
    int[] select(double[] weights, int queries, int keys, int t);
}
