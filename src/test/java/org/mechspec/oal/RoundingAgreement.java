package org.mechspec.oal;

import org.mechspec.compute.FloatArrays;
import org.mechspec.spec.FlashRule;

/**
 * Each form in each precision against the fp64 pairwise oracle, as a ratio to the rounding bound of
 * {@link PairwiseOracle#errorBound}: max over elements of |form − oracle| / (bound of the form + bound of the oracle).
 * A ratio ≤ 1 is what the error analysis allows; a wrong form (a miscounted pair, a lost term) exceeds it.
 */
record RoundingAgreement(double dense32, double recurrent32, double dense64, double recurrent64) {

    boolean holds() {
        return dense32 <= 1 && recurrent32 <= 1 && dense64 <= 1 && recurrent64 <= 1; // NaN fails
    }

    static RoundingAgreement measure(GroupedQuadraticAttentionOps ops, LayerSamples s, int[] groups, int groupCount, double[][] l) {
        QuadraticAttentionShape shape = s.shape(groupCount);
        double[] m = QuadraticForm.gramAll(l, groupCount + 1);
        float[] m32 = FloatArrays.narrow(m);
        float[] q32 = FloatArrays.narrow(s.q());
        float[] k32 = FloatArrays.narrow(s.k());
        float[] v32 = FloatArrays.narrow(s.v());
        double[] oracle = PairwiseOracle.attention(shape, s.q(), s.k(), s.v(), groups, l);
        double[] bound32 = PairwiseOracle.errorBound(shape, s.q(), s.k(), s.v(), groups, l, FlashRule.FP32_UNIT_ROUNDOFF);
        double[] bound64 = PairwiseOracle.errorBound(shape, s.q(), s.k(), s.v(), groups, l, FlashRule.FP64_UNIT_ROUNDOFF);
        return new RoundingAgreement(
                ratio(FloatArrays.widen(ops.dense(shape, q32, k32, v32, groups, m32)), oracle, bound32, bound64),
                ratio(FloatArrays.widen(ops.recurrent(shape, q32, k32, v32, groups, m32)), oracle, bound32, bound64),
                ratio(ops.dense(shape, s.q(), s.k(), s.v(), groups, m), oracle, bound64, bound64),
                ratio(ops.recurrent(shape, s.q(), s.k(), s.v(), groups, m), oracle, bound64, bound64));
    }

    static double ratio(double[] out, double[] oracle, double[] formBound, double[] oracleBound) {
        double worst = 0.0;
        for (int i = 0; i < out.length; i++) {
            double r = Math.abs(out[i] - oracle[i]) / (formBound[i] + oracleBound[i]);
            if (Double.isNaN(r)) {
                return r; // an unwritten or NaN element
            }
            worst = Math.max(worst, r);
        }
        return worst;
    }
}
