package org.mechspec.compute;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.DoubleUnaryOperator;

/**
 * The CPU backend: one attention reference run in fp64 (the oracle) or in fp32. Fixed reduction order and StrictMath, so the same
 * inputs give bit-identical outputs on any machine. The fp32 path doubles as the "naive same-precision
 * reference" of the differential tolerance rule.
 */
public final class CpuBackend implements Backend {
    /** The one instance: the backend holds no state. */
    public static final CpuBackend INSTANCE = new CpuBackend();

    private CpuBackend() {
    }

    @Override
    public String name() {
        return "cpu";
    }

    @Override
    public String device() {
        return cpuModel() + " (" + System.getProperty("os.arch") + ")";
    }

    @Override
    public double[] attention(AttentionShape s, double[] q, double[] k, double[] v, double[] bias) {
        s.requireInputs(q, k, v, bias);
        return attention(s, q, k, v, bias, FP64);
    }

    @Override
    public float[] attention(AttentionShape s, float[] q, float[] k, float[] v, float[] bias) {
        s.requireInputs(q, k, v, bias);
        return FloatArrays.narrow(attention(s, FloatArrays.widen(q), FloatArrays.widen(k), FloatArrays.widen(v),
                bias == null ? null : FloatArrays.widen(bias), FP32));
    }

    private static final DoubleUnaryOperator FP64 = x -> x;
    private static final DoubleUnaryOperator FP32 = x -> (float) x;

    /**
     * One reference for both precisions: {@code r} rounds every operation's result (identity for fp64, to float for
     * fp32). A double result of +, −, ×, ÷ on floats rounded to float is the correctly rounded float result, so the
     * fp32 path is exactly float arithmetic in this order.
     */
    private static double[] attention(AttentionShape s, double[] q, double[] k, double[] v, double[] bias,
                                      DoubleUnaryOperator r) {
        int d = s.headDim();
        int dv = s.valueDim();
        int group = s.queryHeads() / s.kvHeads();
        double scale = r.applyAsDouble(s.scale());
        double[] out = new double[(int) s.outputElements()];
        double[] scores = new double[s.keyLen()];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.queryHeads(); h++) {
                int kvh = h / group;
                int kvBase = (b * s.kvHeads() + kvh) * s.keyLen();
                for (int i = 0; i < s.queryLen(); i++) {
                    int qOff = ((b * s.queryHeads() + h) * s.queryLen() + i) * d;
                    int last = s.lastVisibleKey(i);
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j <= last; j++) {
                        int kOff = (kvBase + j) * d;
                        double dot = 0.0;
                        for (int c = 0; c < d; c++) {
                            dot = r.applyAsDouble(dot + r.applyAsDouble(q[qOff + c] * k[kOff + c]));
                        }
                        double sc = r.applyAsDouble(r.applyAsDouble(dot * scale) + (bias == null ? 0.0 : bias[kvBase + j]));
                        scores[j] = sc;
                        max = Math.max(max, sc);
                    }
                    double denom = 0.0;
                    for (int j = 0; j <= last; j++) {
                        scores[j] = r.applyAsDouble(StrictMath.exp(r.applyAsDouble(scores[j] - max)));
                        denom = r.applyAsDouble(denom + scores[j]);
                    }
                    int oOff = ((b * s.queryHeads() + h) * s.queryLen() + i) * dv;
                    for (int j = 0; j <= last; j++) {
                        double p = r.applyAsDouble(scores[j] / denom);
                        int vOff = (kvBase + j) * dv;
                        for (int c = 0; c < dv; c++) {
                            out[oOff + c] = r.applyAsDouble(out[oOff + c] + r.applyAsDouble(p * v[vOff + c]));
                        }
                    }
                }
            }
        }
        return out;
    }

    @Override
    public double[] roundToHalf(double[] x) {
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = HalfFloat.roundToHalf(x[i]);
        }
        return out;
    }

    @Override
    public double[] roundToBfloat16(double[] x) {
        double[] out = new double[x.length];
        for (int i = 0; i < x.length; i++) {
            out[i] = HalfFloat.roundToBfloat16(x[i]);
        }
        return out;
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // fall through: not Linux, or unreadable
        }
        return "CPU";
    }
}
