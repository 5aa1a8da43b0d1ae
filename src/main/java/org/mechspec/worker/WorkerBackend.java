package org.mechspec.worker;

import java.util.Map;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.Backend;
import org.mechspec.compute.CpuBackend;

/**
 * The backend of a run that judges an outside implementation: the worker's attention and rounding where it serves
 * them, mechspec's CPU backend for the rest. Its name is the implementation's id, so its artifacts are
 * {@code <paper>.<id>.json}; each paper's seams ask {@link #implementation()} for the operations they have.
 */
public final class WorkerBackend implements Backend {
    private final Implementation implementation;

    /** The backend whose operations {@code implementation} computes where it serves them. */
    public WorkerBackend(Implementation implementation) {
        this.implementation = implementation;
    }

    /** The worker behind this backend. */
    public Implementation implementation() {
        return implementation;
    }

    @Override
    public String name() {
        return implementation.id();
    }

    @Override
    public String device() {
        Handshake h = implementation.handshake();
        return h.name() + " " + h.version() + " (outside implementation; mechspec's CPU serves the rest)";
    }

    @Override
    public Map<String, Object> provenance() {
        return Map.of("implementation", implementation.provenance());
    }

    @Override
    public double[] attention(AttentionShape s, double[] q, double[] k, double[] v, double[] bias) {
        if (!implementation.serves("attention", Operations.F64)) {
            implementation.fellBack("attention (f64)");
            return CpuBackend.INSTANCE.attention(s, q, k, v, bias);
        }
        s.requireInputs(q, k, v, bias);
        return attention(s, Operations.F64, WireTensor.of(q, queryShape(s)), WireTensor.of(k, keyShape(s)), WireTensor.of(v, valueShape(s)),
                bias == null ? null : WireTensor.of(bias, biasShape(s))).f64("out");
    }

    @Override
    public float[] attention(AttentionShape s, float[] q, float[] k, float[] v, float[] bias) {
        if (!implementation.serves("attention", Operations.F32)) {
            implementation.fellBack("attention (f32)");
            return CpuBackend.INSTANCE.attention(s, q, k, v, bias);
        }
        s.requireInputs(q, k, v, bias);
        return attention(s, Operations.F32, WireTensor.of(q, queryShape(s)), WireTensor.of(k, keyShape(s)), WireTensor.of(v, valueShape(s)),
                bias == null ? null : WireTensor.of(bias, biasShape(s))).f32("out");
    }

    private Call.Reply attention(AttentionShape s, String precision, WireTensor q, WireTensor k, WireTensor v, WireTensor bias) {
        Call call = implementation.call("attention", precision).param("scale", s.scale()).param("causal", s.causal())
                .input("q", q).input("k", k).input("v", v);
        if (bias != null) {
            call.input("bias", bias);
        }
        return call.output("out", call.floats(), s.batch(), s.queryHeads(), s.queryLen(), s.valueDim()).run();
    }

    private static long[] queryShape(AttentionShape s) {
        return new long[] {s.batch(), s.queryHeads(), s.queryLen(), s.headDim()};
    }

    private static long[] keyShape(AttentionShape s) {
        return new long[] {s.batch(), s.kvHeads(), s.keyLen(), s.headDim()};
    }

    private static long[] valueShape(AttentionShape s) {
        return new long[] {s.batch(), s.kvHeads(), s.keyLen(), s.valueDim()};
    }

    private static long[] biasShape(AttentionShape s) {
        return new long[] {s.batch(), s.kvHeads(), s.keyLen()};
    }

    @Override
    public double[] roundToHalf(double[] x) {
        return round("round_to_half", x);
    }

    @Override
    public double[] roundToBfloat16(double[] x) {
        return round("round_to_bfloat16", x);
    }

    private double[] round(String op, double[] x) {
        if (!implementation.serves(op, Operations.EXACT)) {
            implementation.fellBack(op);
            return op.equals("round_to_half") ? CpuBackend.INSTANCE.roundToHalf(x) : CpuBackend.INSTANCE.roundToBfloat16(x);
        }
        return implementation.call(op, Operations.EXACT).input("x", x, x.length)
                .outputAnyValue("y", WireTensor.Dtype.F64, x.length).run().f64("y");
    }
}
