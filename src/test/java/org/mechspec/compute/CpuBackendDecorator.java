package org.mechspec.compute;

/**
 * The CPU backend with every op passed through, for mutant tests that override the one op they break. Its name is
 * the CPU's, so mechanisms that route by backend name (the rank-one fold, the packed cache) still pick the CPU twins.
 */
public abstract class CpuBackendDecorator implements Backend {
    @Override
    public String name() {
        return CpuBackend.INSTANCE.name();
    }

    @Override
    public String device() {
        return "mutant";
    }

    @Override
    public double[] attention(AttentionShape s, double[] q, double[] k, double[] v, double[] bias) {
        return CpuBackend.INSTANCE.attention(s, q, k, v, bias);
    }

    @Override
    public float[] attention(AttentionShape s, float[] q, float[] k, float[] v, float[] bias) {
        return CpuBackend.INSTANCE.attention(s, q, k, v, bias);
    }

    @Override
    public double[] roundToHalf(double[] x) {
        return CpuBackend.INSTANCE.roundToHalf(x);
    }

    @Override
    public double[] roundToBfloat16(double[] x) {
        return CpuBackend.INSTANCE.roundToBfloat16(x);
    }
}
