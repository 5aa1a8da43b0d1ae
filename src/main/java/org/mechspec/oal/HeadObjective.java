package org.mechspec.oal;


/**
 * One query head's calibration objective (protocols.md, OAL): the MSE between the grouped-quadratic attention output and
 * the softmax output of the converted layer over some blocks, as a function of the head's factor L, with its
 * analytic gradient. The partial dot products z_g(q_t, k_j) do not depend on L and are computed once.
 */
final class HeadObjective implements CalibrationObjective {
    private final int blocks;
    private final int seqLen;
    private final int headDim;
    private final int side;
    private final double[] z;      // [(b, t, j ≤ t), G], pairs packed row by row
    private final double[] values; // [b, j, d] of the head's KV head
    private final double[] target; // [b, t, d] softmax output of the head

    HeadObjective(LayerSamples s, int head, int[] headGroups, int groupCount) {
        this.blocks = s.blocks();
        this.seqLen = s.seqLen();
        this.headDim = s.headDim();
        this.side = groupCount + 1;
        if (headGroups.length != headDim) {
            throw new IllegalArgumentException(headGroups.length + " group ids for head dimension " + headDim);
        }
        int kv = s.kvHeadOf(head);
        double invSqrtD = 1.0 / Math.sqrt(headDim);
        z = new double[blocks * pairsPerBlock() * groupCount];
        values = new double[blocks * seqLen * headDim];
        target = new double[blocks * seqLen * headDim];
        for (int b = 0; b < blocks; b++) {
            for (int t = 0; t < seqLen; t++) {
                int qOff = s.queryOffset(b, t, head);
                System.arraycopy(s.v(), s.kvOffset(b, t, kv), values, (b * seqLen + t) * headDim, headDim);
                System.arraycopy(s.softmax(), qOff, target, (b * seqLen + t) * headDim, headDim);
                for (int j = 0; j <= t; j++) {
                    int kOff = s.kvOffset(b, j, kv);
                    int at = pair(b, t, j) * groupCount;
                    for (int i = 0; i < headDim; i++) {
                        z[at + headGroups[i]] += (s.q()[qOff + i] * invSqrtD) * s.k()[kOff + i];
                    }
                }
            }
        }
    }

    private int pairsPerBlock() {
        return seqLen * (seqLen + 1) / 2;
    }

    private int pair(int b, int t, int j) {
        return b * pairsPerBlock() + t * (t + 1) / 2 + j;
    }

    @Override
    public int side() {
        return side;
    }

    /** The loss; when {@code grad} is not null, ∂loss/∂L (lower triangle; the upper stays zero) is written to it. */
    @Override
    public double evaluate(double[] l, double[] grad) {
        int groups = side - 1;
        double[] m = QuadraticForm.gram(l, side);
        double[] dM = new double[side * side];
        double[] phi = new double[side];
        double[] sims = new double[seqLen];
        double[] out = new double[headDim];
        double[] gOut = new double[headDim];
        double n = (double) blocks * seqLen * headDim;
        double loss = 0.0;
        for (int b = 0; b < blocks; b++) {
            for (int t = 0; t < seqLen; t++) {
                double den = 0.0;
                java.util.Arrays.fill(out, 0.0);
                for (int j = 0; j <= t; j++) {
                    loadPhi(b, t, j, groups, phi);
                    double s = GroupedQuadraticAttentionOps.EPSILON + quadratic(m, phi);
                    sims[j] = s;
                    den += s;
                    int vOff = (b * seqLen + j) * headDim;
                    for (int c = 0; c < headDim; c++) {
                        out[c] += s * values[vOff + c];
                    }
                }
                if (!(den > 0) || Double.isInfinite(den)) {
                    throw new IllegalStateException("calibration denominator at block " + b + ", token " + t + " is " + den);
                }
                int tOff = (b * seqLen + t) * headDim;
                for (int c = 0; c < headDim; c++) {
                    out[c] /= den;
                    double diff = out[c] - target[tOff + c];
                    loss += diff * diff;
                    gOut[c] = 2.0 * diff / n;
                }
                if (grad == null) {
                    continue;
                }
                for (int j = 0; j <= t; j++) {
                    int vOff = (b * seqLen + j) * headDim;
                    double dS = 0.0; // ∂loss/∂sim_j = Σ_c gOut_c·(v_jc − o_c)/den
                    for (int c = 0; c < headDim; c++) {
                        double centered = values[vOff + c] - out[c];
                        dS += gOut[c] * centered;
                    }
                    dS /= den;
                    loadPhi(b, t, j, groups, phi);
                    for (int a = 0; a < side; a++) {
                        for (int c = 0; c < side; c++) {
                            dM[a * side + c] += dS * phi[a] * phi[c];
                        }
                    }
                }
            }
        }
        if (grad != null) {
            // M = L·Lᵀ and ∂loss/∂M symmetric ⇒ ∂loss/∂L = 2·(∂loss/∂M)·L, kept on the lower triangle.
            java.util.Arrays.fill(grad, 0.0);
            for (int r = 0; r < side; r++) {
                for (int c = 0; c <= r; c++) {
                    double sum = 0.0;
                    for (int k = 0; k < side; k++) {
                        sum += dM[r * side + k] * l[k * side + c];
                    }
                    grad[r * side + c] = 2.0 * sum;
                }
            }
        }
        return loss / n;
    }

    private void loadPhi(int b, int t, int j, int groups, double[] phi) {
        phi[0] = 1.0;
        System.arraycopy(z, pair(b, t, j) * groups, phi, 1, groups);
    }

    private double quadratic(double[] m, double[] phi) {
        double quad = 0.0;
        for (int a = 0; a < side; a++) {
            double row = 0.0;
            for (int c = 0; c < side; c++) {
                row += m[a * side + c] * phi[c];
            }
            quad += phi[a] * row;
        }
        return quad;
    }
}
