package org.mechspec.model;

/**
 * Storage precision of a model's tensors. FP32 is the working precision (fp32 storage, fp32 matmuls,
 * elementwise kernels computed in double and rounded once on store); FP64 is the checking precision used by
 * finite-difference gradient checks and identities that must hold to ~1e-12.
 */
public enum Precision {
    FP32,
    FP64
}
