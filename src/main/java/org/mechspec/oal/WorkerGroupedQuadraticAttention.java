package org.mechspec.oal;

import org.mechspec.worker.Call;
import org.mechspec.worker.Implementation;
import org.mechspec.worker.Operations;
import org.mechspec.worker.WireTensor;
import org.mechspec.worker.WorkerException;

/**
 * Grouped-quadratic attention served by an outside implementation ({@code PROTOCOL.md}): each form and precision the
 * worker serves goes to it, the others to the CPU twin. Inputs are checked here as the twins check them; a worker's
 * {@code non_positive_denominator} error is the same runtime guard as the twins'.
 */
final class WorkerGroupedQuadraticAttention implements GroupedQuadraticAttentionOps {
    private static final GroupedQuadraticAttentionOps CPU = CpuGroupedQuadraticAttention.INSTANCE;
    private final Implementation impl;

    WorkerGroupedQuadraticAttention(Implementation impl) {
        this.impl = impl;
    }

    @Override
    public String name() {
        return impl.id();
    }

    @Override
    public double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        if (!impl.serves("oal.dense", Operations.F64)) {
            impl.fellBack("oal.dense (f64)");
            return CPU.dense(s, q, k, v, groups, m);
        }
        CpuGroupedQuadraticAttention.checkInputs(s, q, k, v, groups, m);
        return run("oal.dense", Operations.F64, s, groups, WireTensor.of(q, queryShape(s)), WireTensor.of(k, kvShape(s)),
                WireTensor.of(v, kvShape(s)), WireTensor.of(m, mShape(s))).f64("out");
    }

    @Override
    public float[] dense(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        if (!impl.serves("oal.dense", Operations.F32)) {
            impl.fellBack("oal.dense (f32)");
            return CPU.dense(s, q, k, v, groups, m);
        }
        CpuGroupedQuadraticAttention.checkInputs(s, q, k, v, groups, m);
        return run("oal.dense", Operations.F32, s, groups, WireTensor.of(q, queryShape(s)), WireTensor.of(k, kvShape(s)),
                WireTensor.of(v, kvShape(s)), WireTensor.of(m, mShape(s))).f32("out");
    }

    @Override
    public double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        if (!impl.serves("oal.recurrent", Operations.F64)) {
            impl.fellBack("oal.recurrent (f64)");
            return CPU.recurrent(s, q, k, v, groups, m);
        }
        CpuGroupedQuadraticAttention.checkInputs(s, q, k, v, groups, m);
        return run("oal.recurrent", Operations.F64, s, groups, WireTensor.of(q, queryShape(s)), WireTensor.of(k, kvShape(s)),
                WireTensor.of(v, kvShape(s)), WireTensor.of(m, mShape(s))).f64("out");
    }

    @Override
    public float[] recurrent(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        if (!impl.serves("oal.recurrent", Operations.F32)) {
            impl.fellBack("oal.recurrent (f32)");
            return CPU.recurrent(s, q, k, v, groups, m);
        }
        CpuGroupedQuadraticAttention.checkInputs(s, q, k, v, groups, m);
        return run("oal.recurrent", Operations.F32, s, groups, WireTensor.of(q, queryShape(s)), WireTensor.of(k, kvShape(s)),
                WireTensor.of(v, kvShape(s)), WireTensor.of(m, mShape(s))).f32("out");
    }

    /** One call of either form; the worker's {@code non_positive_denominator} is the twins' guard. */
    private Call.Reply run(String op, String precision, QuadraticAttentionShape s, int[] groups, WireTensor q, WireTensor k,
                           WireTensor v, WireTensor m) {
        Call call = impl.call(op, precision).input("groups", groups, groups.length).param("group_count", s.groupCount())
                .input("q", q).input("k", k).input("v", v).input("m", m);
        try {
            return call.output("out", call.floats(), queryShape(s)).run();
        } catch (WorkerException e) {
            if (e.type().equals("non_positive_denominator")) {
                throw NonPositiveDenominatorException.reported(e.getMessage());
            }
            throw e;
        }
    }

    private static long[] queryShape(QuadraticAttentionShape s) {
        return new long[] {s.batch(), s.seqLen(), s.heads(), s.headDim()};
    }

    private static long[] kvShape(QuadraticAttentionShape s) {
        return new long[] {s.batch(), s.seqLen(), s.kvHeads(), s.headDim()};
    }

    private static long[] mShape(QuadraticAttentionShape s) {
        return new long[] {s.heads(), s.side(), s.side()};
    }
}
