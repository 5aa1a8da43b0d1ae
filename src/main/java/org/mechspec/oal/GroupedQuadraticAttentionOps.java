package org.mechspec.oal;

import org.mechspec.compute.Backend;
import org.mechspec.compute.UnavailableBackend;
import org.mechspec.worker.WorkerBackend;

/**
 * Causal grouped-quadratic linear attention (OAL) in its two exact forms: dense (the masked T×T similarity matrix)
 * and recurrent (running sums of [v, 1], k⊗[v, 1] and (k_i·k_j)_{i≤j}⊗[v, 1], contracted with each query's
 * coefficients). Layouts in {@link QuadraticAttentionShape}. fp64 and fp32 paths; the CPU implementation is the
 * twin of the CUDA one. Every call checks its denominators ({@link NonPositiveDenominatorException}).
 */
public interface GroupedQuadraticAttentionOps {
    /** ε of sim = ε + [1, z]·M·[1, z]ᵀ. */
    double EPSILON = 1e-6;

    String name();

    double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m);

    float[] dense(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m);

    double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m);

    float[] recurrent(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m);

    /** The implementation that runs on {@code backend} ("cpu", "cuda", or an outside implementation's where it serves). */
    static GroupedQuadraticAttentionOps forBackend(Backend backend) {
        if (backend instanceof WorkerBackend w) {
            return new WorkerGroupedQuadraticAttention(w.implementation());
        }
        switch (backend.name()) {
            case "cpu":
                return CpuGroupedQuadraticAttention.INSTANCE;
            case "cuda":
            case "cuda-emulated":
                if (backend instanceof UnavailableBackend u) {
                    throw new IllegalStateException(u.reason());
                }
                return CudaGroupedQuadraticAttention.get();
            default:
                throw new IllegalArgumentException("no grouped-quadratic attention for backend '" + backend.name() + "'");
        }
    }
}
