package org.mechspec.compute;

/**
 * The operations mechanisms run on. Each has a CPU implementation (fp64 oracle and fp32 path, deterministic)
 * and a CUDA implementation with the same semantics; differential contracts hold them to each other.
 * Inputs must be finite: a NaN or infinity is rejected with the array and index named.
 */
public interface Backend {
    /** "cpu", "cuda" or "cuda-emulated": the artifact's backend. */
    String name();

    /** The device as a person would name it, e.g. "NVIDIA H200" or the CPU model. */
    String device();

    /** What else identifies the executed code on this device (driver, compiler, loaded kernel images); empty on CPU. */
    default java.util.Map<String, Object> provenance() {
        return java.util.Map.of();
    }

    /** fp64 attention; {@code bias} may be null. See {@link AttentionShape} for layouts. */
    double[] attention(AttentionShape shape, double[] q, double[] k, double[] v, double[] bias);

    /** fp32 attention (fp32 inputs, fp32 arithmetic). */
    float[] attention(AttentionShape shape, float[] q, float[] k, float[] v, float[] bias);

    /** Each element rounded to the nearest fp16 value (ties to even), returned as doubles. */
    double[] roundToHalf(double[] x);

    /** Each element rounded to the nearest bfloat16 value (ties to even), returned as doubles. */
    double[] roundToBfloat16(double[] x);
}
