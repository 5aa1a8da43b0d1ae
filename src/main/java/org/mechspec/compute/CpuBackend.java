package org.mechspec.compute;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The CPU backend: an fp64 oracle and a plain fp32 path. Fixed reduction order and StrictMath, so the same
 * inputs give bit-identical outputs on any machine. The fp32 path doubles as the "naive same-precision
 * reference" of the differential tolerance rule.
 */
public final class CpuBackend implements Backend {
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
        s.validate(q.length, k.length, v.length, bias == null ? 0 : bias.length, bias != null);
        Finite.require("q", q);
        Finite.require("k", k);
        Finite.require("v", v);
        if (bias != null) {
            Finite.require("bias", bias);
        }
        int d = s.headDim();
        int dv = s.valueDim();
        int group = s.queryHeads() / s.kvHeads();
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
                            dot += q[qOff + c] * k[kOff + c];
                        }
                        double sc = dot * s.scale() + (bias == null ? 0.0 : bias[kvBase + j]);
                        scores[j] = sc;
                        max = Math.max(max, sc);
                    }
                    double denom = 0.0;
                    for (int j = 0; j <= last; j++) {
                        scores[j] = StrictMath.exp(scores[j] - max);
                        denom += scores[j];
                    }
                    int oOff = ((b * s.queryHeads() + h) * s.queryLen() + i) * dv;
                    for (int j = 0; j <= last; j++) {
                        double p = scores[j] / denom;
                        int vOff = (kvBase + j) * dv;
                        for (int c = 0; c < dv; c++) {
                            out[oOff + c] += p * v[vOff + c];
                        }
                    }
                }
            }
        }
        return out;
    }

    @Override
    public float[] attention(AttentionShape s, float[] q, float[] k, float[] v, float[] bias) {
        s.validate(q.length, k.length, v.length, bias == null ? 0 : bias.length, bias != null);
        Finite.require("q", q);
        Finite.require("k", k);
        Finite.require("v", v);
        if (bias != null) {
            Finite.require("bias", bias);
        }
        int d = s.headDim();
        int dv = s.valueDim();
        int group = s.queryHeads() / s.kvHeads();
        float scale = (float) s.scale();
        float[] out = new float[(int) s.outputElements()];
        float[] scores = new float[s.keyLen()];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.queryHeads(); h++) {
                int kvh = h / group;
                int kvBase = (b * s.kvHeads() + kvh) * s.keyLen();
                for (int i = 0; i < s.queryLen(); i++) {
                    int qOff = ((b * s.queryHeads() + h) * s.queryLen() + i) * d;
                    int last = s.lastVisibleKey(i);
                    float max = Float.NEGATIVE_INFINITY;
                    for (int j = 0; j <= last; j++) {
                        int kOff = (kvBase + j) * d;
                        float dot = 0f;
                        for (int c = 0; c < d; c++) {
                            dot += q[qOff + c] * k[kOff + c];
                        }
                        float sc = dot * scale + (bias == null ? 0f : bias[kvBase + j]);
                        scores[j] = sc;
                        max = Math.max(max, sc);
                    }
                    float denom = 0f;
                    for (int j = 0; j <= last; j++) {
                        scores[j] = (float) StrictMath.exp(scores[j] - max);
                        denom += scores[j];
                    }
                    int oOff = ((b * s.queryHeads() + h) * s.queryLen() + i) * dv;
                    for (int j = 0; j <= last; j++) {
                        float p = scores[j] / denom;
                        int vOff = (kvBase + j) * dv;
                        for (int c = 0; c < dv; c++) {
                            out[oOff + c] += p * v[vOff + c];
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
