package org.mechspec.kernels;

import java.util.function.DoubleUnaryOperator;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.Backend;
import org.mechspec.compute.CpuBackendDecorator;
import org.mechspec.compute.FloatArrays;

/**
 * Attentions written otherwise than mechspec's CPU reference, right and wrong, for the property halves' own tests: a
 * FlashAttention-style blocked online softmax (right, in any tile size and either precision), and the same with the
 * max shift left out or with a key dropped in a band of key counts (wrong, as real kernels shipped).
 */
final class AttentionVariants {
    private AttentionVariants() {
    }

    /** How a variant computes a row. */
    record Variant(int tile, boolean maxShift, int dropLastKeyFrom, int dropLastKeyTo) {
        static Variant blocked(int tile) {
            return new Variant(tile, true, 0, -1);
        }

        Variant withoutMaxShift() {
            return new Variant(tile, false, dropLastKeyFrom, dropLastKeyTo);
        }

        /** Drops the last visible key of every row when the key count lies in [from, to]. */
        Variant droppingLastKeyFor(int from, int to) {
            return new Variant(tile, maxShift, from, to);
        }
    }

    /** A backend whose fp64 and fp32 attention are {@code variant} (fp32 in float arithmetic throughout). */
    static Backend backend(Variant variant) {
        return new CpuBackendDecorator() {
            @Override
            public double[] attention(AttentionShape s, double[] q, double[] k, double[] v, double[] bias) {
                return AttentionVariants.attention(variant, s, q, k, v, bias, x -> x);
            }

            @Override
            public float[] attention(AttentionShape s, float[] q, float[] k, float[] v, float[] bias) {
                return FloatArrays.narrow(AttentionVariants.attention(variant, s, FloatArrays.widen(q), FloatArrays.widen(k),
                        FloatArrays.widen(v), bias == null ? null : FloatArrays.widen(bias), x -> (float) x));
            }
        };
    }

    /** Online softmax over tiles of keys: a running max, normalizer and accumulator, rescaled once per tile. */
    static double[] attention(Variant variant, AttentionShape s, double[] q, double[] k, double[] v, double[] bias,
                              DoubleUnaryOperator r) {
        int d = s.headDim();
        int dv = s.valueDim();
        int group = s.queryHeads() / s.kvHeads();
        double scale = r.applyAsDouble(s.scale());
        double[] out = new double[(int) s.outputElements()];
        double[] acc = new double[dv];
        boolean drop = s.keyLen() >= variant.dropLastKeyFrom() && s.keyLen() <= variant.dropLastKeyTo();
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < s.queryHeads(); h++) {
                int kvBase = (b * s.kvHeads() + h / group) * s.keyLen();
                for (int i = 0; i < s.queryLen(); i++) {
                    int qOff = ((b * s.queryHeads() + h) * s.queryLen() + i) * d;
                    int last = s.lastVisibleKey(i) - (drop && s.lastVisibleKey(i) > 0 ? 1 : 0);
                    double m = variant.maxShift() ? Double.NEGATIVE_INFINITY : 0;
                    double l = 0;
                    java.util.Arrays.fill(acc, 0);
                    for (int start = 0; start <= last; start += variant.tile()) {
                        int end = Math.min(last, start + variant.tile() - 1);
                        double[] sc = new double[end - start + 1];
                        double tileMax = Double.NEGATIVE_INFINITY;
                        for (int j = start; j <= end; j++) {
                            double dot = 0;
                            for (int c = 0; c < d; c++) {
                                dot = r.applyAsDouble(dot + r.applyAsDouble(q[qOff + c] * k[(kvBase + j) * d + c]));
                            }
                            sc[j - start] = r.applyAsDouble(r.applyAsDouble(dot * scale) + (bias == null ? 0 : bias[kvBase + j]));
                            tileMax = Math.max(tileMax, sc[j - start]);
                        }
                        double mNew = variant.maxShift() ? Math.max(m, tileMax) : 0;
                        double rescale = r.applyAsDouble(Math.exp(m - mNew));
                        l = r.applyAsDouble(l * rescale);
                        for (int c = 0; c < dv; c++) {
                            acc[c] = r.applyAsDouble(acc[c] * rescale);
                        }
                        for (int j = start; j <= end; j++) {
                            double p = r.applyAsDouble(Math.exp(r.applyAsDouble(sc[j - start] - mNew)));
                            l = r.applyAsDouble(l + p);
                            for (int c = 0; c < dv; c++) {
                                acc[c] = r.applyAsDouble(acc[c] + r.applyAsDouble(p * v[(kvBase + j) * dv + c]));
                            }
                        }
                        m = mNew;
                    }
                    int oOff = ((b * s.queryHeads() + h) * s.queryLen() + i) * dv;
                    for (int c = 0; c < dv; c++) {
                        out[oOff + c] = r.applyAsDouble(acc[c] / l);
                    }
                }
            }
        }
        return out;
    }
}
