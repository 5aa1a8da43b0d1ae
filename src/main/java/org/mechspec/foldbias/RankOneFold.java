package org.mechspec.foldbias;

import org.mechspec.compute.Backend;
import org.mechspec.compute.Finite;
import org.mechspec.worker.WorkerBackend;

/**
 * The rank-one fold K_f = C_k + β·uᵀ (fp64): row j of the folded keys is C_k[j] + β_j·u. Every element is one
 * multiply and one add, each rounded (no fused multiply-add), so the CPU twin and the CUDA kernel agree bit for bit.
 */
public interface RankOneFold {
    /**
     * @param compactKeys C_k [t, d]
     * @param beta β [t]
     * @param u fold direction [d]
     * @return K_f [t, d]
     */
    double[] fold(double[] compactKeys, double[] beta, double[] u, int t, int d);

    /** The fold on the given backend: the CPU twin, the {@code foldbias.cu} kernel on CUDA, or an outside implementation's. */
    static RankOneFold on(Backend backend) {
        if (backend instanceof WorkerBackend w) {
            return WorkerFoldBias.fold(w.implementation());
        }
        return switch (backend.name()) {
            case "cpu" -> new CpuRankOneFold();
            case "cuda", "cuda-emulated" -> new CudaRankOneFold();
            default -> throw new IllegalArgumentException("no rank-one fold for backend '" + backend.name() + "'");
        };
    }

    /** Shape checks shared by both implementations. */
    static void validate(double[] compactKeys, double[] beta, double[] u, int t, int d) {
        if (t <= 0 || d <= 0) {
            throw new IllegalArgumentException("fold needs t > 0 and d > 0, got t = " + t + ", d = " + d);
        }
        if (compactKeys.length != (long) t * d || beta.length != t || u.length != d) {
            throw new IllegalArgumentException("fold shapes: C_k has " + compactKeys.length + " (needs " + (long) t * d
                    + "), beta " + beta.length + " (needs " + t + "), u " + u.length + " (needs " + d + ")");
        }
        Finite.require("C_k", compactKeys);
        Finite.require("beta", beta);
        Finite.require("u", u);
    }
}
