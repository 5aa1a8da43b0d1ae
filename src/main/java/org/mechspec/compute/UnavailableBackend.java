package org.mechspec.compute;

/**
 * Stands in for the CUDA backend where there is no usable device, so a GPU contract's invocations are listed
 * and skipped one by one with the probe's reason instead of silently vanishing.
 */
public record UnavailableBackend(String reason) implements Backend {
    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public String device() {
        return "unavailable";
    }

    @Override
    public double[] attention(AttentionShape shape, double[] q, double[] k, double[] v, double[] bias) {
        throw new IllegalStateException(reason);
    }

    @Override
    public float[] attention(AttentionShape shape, float[] q, float[] k, float[] v, float[] bias) {
        throw new IllegalStateException(reason);
    }

    @Override
    public double[] roundToHalf(double[] x) {
        throw new IllegalStateException(reason);
    }

    @Override
    public double[] roundToBfloat16(double[] x) {
        throw new IllegalStateException(reason);
    }
}
