package org.mechspec.foldbias;

import org.mechspec.compute.Backend;
import org.mechspec.worker.WorkerBackend;

/** Which t of the n keys a compaction keeps, read off the attention weights over the reference queries. */
@FunctionalInterface
interface KeySelector {
    /** The protocol's rule (protocols.md, fold-bias): the t keys with the largest max weight, in index order. */
    KeySelector TOP_BY_MAX_WEIGHT = KeySelection::topByMaxWeight;

    /** The backend's selection: an outside implementation's where it serves it, else the protocol's rule. */
    static KeySelector on(Backend backend) {
        return backend instanceof WorkerBackend w ? WorkerFoldBias.selector(w.implementation()) : TOP_BY_MAX_WEIGHT;
    }

    /**
     * @param weights attention weights [queries, keys]
     * @return t distinct key indices in increasing order
     */
    int[] select(double[] weights, int queries, int keys, int t);
}
