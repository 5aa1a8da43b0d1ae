package org.mechspec.foldbias;

import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.Backend;

/**
 * Single-head fp64 attention through a {@link Backend}, so the same protocol runs on the CPU and on CUDA.
 * Attention weights are read off as the attention output over identity values (row j of I is e_j, so the
 * output row is exactly the weight row: every other term adds an exact zero).
 */
final class AttentionOps {
    private AttentionOps() {
    }

    /** softmax(q·kᵀ/√d + bias)·v: q [queries, d], k [keys, d], v [keys, dv], bias [keys] or null. */
    static double[] output(Backend backend, double[] q, int queries, double[] k, int keys, int d, double[] v, int dv,
                           double[] bias) {
        AttentionShape shape = AttentionShape.of(1, 1, 1, queries, keys, d, dv, false);
        return backend.attention(shape, q, k, v, bias);
    }

    /** softmax(q·kᵀ/√d + bias) as [queries, keys]. */
    static double[] weights(Backend backend, double[] q, int queries, double[] k, int keys, int d, double[] bias) {
        return output(backend, q, queries, k, keys, d, Dense.identity(keys), keys, bias);
    }
}
