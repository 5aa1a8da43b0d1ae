package org.mechspec.worker;

import java.util.Map;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.Backend;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.Finite;

/**
 * The backend of a run that judges an outside implementation: the worker's attention and rounding where it serves
 * them, mechspec's CPU backend for the rest. Its name is the implementation's id, so its artifacts are
 * {@code <paper>.<id>.json}; each paper's seams ask {@link #implementation()} for the operations they have.
 */
public final class WorkerBackend implements Backend {
    private final Implementation implementation;

    public WorkerBackend(Implementation implementation) {
        this.implementation = implementation;
    }

    public Implementation implementation() {
        return implementation;
    }

    @Override
    public String name() {
        return implementation.id();
    }

    @Override
    public String device() {
        Implementation.Handshake h = implementation.handshake();
        return h.name() + " " + h.version() + " (outside implementation; mechspec's CPU serves the rest)";
    }

    @Override
    public Map<String, Object> provenance() {
        return Map.of("implementation", implementation.provenance());
    }

    @Override
    public double[] attention(AttentionShape s, double[] q, double[] k, double[] v, double[] bias) {
        if (!implementation.serves("attention", Operations.F64)) {
            return CpuBackend.INSTANCE.attention(s, q, k, v, bias);
        }
        check(s, q.length, k.length, v.length, bias == null ? -1 : bias.length);
        Finite.require("q", q);
        Finite.require("k", k);
        Finite.require("v", v);
        Call call = attention(s, Operations.F64).input("q", q, s.batch(), s.queryHeads(), s.queryLen(), s.headDim())
                .input("k", k, s.batch(), s.kvHeads(), s.keyLen(), s.headDim())
                .input("v", v, s.batch(), s.kvHeads(), s.keyLen(), s.valueDim());
        if (bias != null) {
            Finite.require("bias", bias);
            call.input("bias", bias, s.batch(), s.kvHeads(), s.keyLen());
        }
        return call.run().f64("out");
    }

    @Override
    public float[] attention(AttentionShape s, float[] q, float[] k, float[] v, float[] bias) {
        if (!implementation.serves("attention", Operations.F32)) {
            return CpuBackend.INSTANCE.attention(s, q, k, v, bias);
        }
        check(s, q.length, k.length, v.length, bias == null ? -1 : bias.length);
        Finite.require("q", q);
        Finite.require("k", k);
        Finite.require("v", v);
        Call call = attention(s, Operations.F32).input("q", q, s.batch(), s.queryHeads(), s.queryLen(), s.headDim())
                .input("k", k, s.batch(), s.kvHeads(), s.keyLen(), s.headDim())
                .input("v", v, s.batch(), s.kvHeads(), s.keyLen(), s.valueDim());
        if (bias != null) {
            Finite.require("bias", bias);
            call.input("bias", bias, s.batch(), s.kvHeads(), s.keyLen());
        }
        return call.run().f32("out");
    }

    private static void check(AttentionShape s, int q, int k, int v, int bias) {
        s.validate(q, k, v, Math.max(bias, 0), bias >= 0);
    }

    private Call attention(AttentionShape s, String precision) {
        Call call = implementation.call("attention", precision).param("scale", s.scale()).param("causal", s.causal());
        return call.output("out", call.floats(), s.batch(), s.queryHeads(), s.queryLen(), s.valueDim());
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
            return op.equals("round_to_half") ? CpuBackend.INSTANCE.roundToHalf(x) : CpuBackend.INSTANCE.roundToBfloat16(x);
        }
        return implementation.call(op, Operations.EXACT).input("x", x, x.length)
                .outputAnyValue("y", WireTensor.Dtype.F64, x.length).run().f64("y");
    }
}
