package org.mechspec.oal;

import org.mechspec.compute.FloatArrays;

/**
 * How closely the kernel's forms agree on one input: recurrent vs dense in fp32 and in fp64 (on the backend's
 * kernels), and the backend's fp64 dense form vs the pairwise oracle.
 */
record KernelAgreement(double recurrentDenseFp32, double recurrentDenseFp64, double denseOracleFp64) {

    static KernelAgreement measure(GroupedQuadraticAttentionOps ops, LayerSamples s, int[] groups, int groupCount, double[][] l) {
        QuadraticAttentionShape shape = s.shape(groupCount);
        double[] m = QuadraticForm.gramAll(l, groupCount + 1);
        float[] m32 = FloatArrays.narrow(m);
        float[] q32 = FloatArrays.narrow(s.q());
        float[] k32 = FloatArrays.narrow(s.k());
        float[] v32 = FloatArrays.narrow(s.v());
        float[] dense32 = ops.dense(shape, q32, k32, v32, groups, m32);
        float[] recurrent32 = ops.recurrent(shape, q32, k32, v32, groups, m32);
        double[] dense64 = ops.dense(shape, s.q(), s.k(), s.v(), groups, m);
        double[] recurrent64 = ops.recurrent(shape, s.q(), s.k(), s.v(), groups, m);
        double[] oracle = PairwiseOracle.attention(shape, s.q(), s.k(), s.v(), groups, l);
        double fp32 = 0.0;
        double fp64 = 0.0;
        double vsOracle = 0.0;
        for (int i = 0; i < dense64.length; i++) {
            fp32 = Math.max(fp32, Math.abs((double) recurrent32[i] - dense32[i]));
            fp64 = Math.max(fp64, Math.abs(recurrent64[i] - dense64[i]));
            vsOracle = Math.max(vsOracle, Math.abs(dense64[i] - oracle[i]));
        }
        return new KernelAgreement(fp32, fp64, vsOracle);
    }
}
