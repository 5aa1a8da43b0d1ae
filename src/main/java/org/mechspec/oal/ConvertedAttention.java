package org.mechspec.oal;

import java.util.List;
import org.mechspec.model.AttentionBlock;
import org.mechspec.model.HeadLayout;
import org.mechspec.model.Parameter;
import org.mechspec.model.Precision;
import org.mechspec.model.Tensor;

/**
 * The converted layer's attention core: causal grouped-quadratic attention in its dense form on the backend's
 * kernel (fp64), with an explicit fp64 backward to q, k and v on the CPU. The coefficients are one frozen
 * parameter, L of every head ([heads, G+1, G+1]), so LoRA training cannot move them.
 */
public final class ConvertedAttention implements AttentionBlock {
    private final int layer;
    private final GroupedQuadraticAttentionOps ops;
    private final int[] groups;
    private final int groupCount;
    private final int heads;
    private final int headDim;
    private final Parameter factor;

    ConvertedAttention(int layer, GroupedQuadraticAttentionOps ops, int[] groups, int groupCount, double[][] lPerHead) {
        this.layer = layer;
        this.ops = ops;
        this.groupCount = groupCount;
        this.heads = lPerHead.length;
        if (heads == 0 || groups.length % heads != 0) {
            throw new IllegalArgumentException(groups.length + " group ids do not split over " + heads + " heads");
        }
        this.headDim = groups.length / heads;
        this.groups = groups.clone();
        int side = groupCount + 1;
        double[] l = new double[heads * side * side];
        for (int h = 0; h < heads; h++) {
            if (lPerHead[h].length != side * side) {
                throw new IllegalArgumentException("head " + h + " has " + lPerHead[h].length + " coefficients, G = "
                        + groupCount + " needs " + side * side);
            }
            System.arraycopy(lPerHead[h], 0, l, h * side * side, side * side);
        }
        this.factor = new Parameter("model.layers." + layer + ".self_attn.oal.coefficient_factor",
                Tensor.of(Precision.FP64, l, heads, side, side), false);
    }

    /** M of every head ([heads, side, side]) from the current factor. */
    double[] gram() {
        int side = groupCount + 1;
        double[][] l = new double[heads][];
        double[] all = factor.value().toDoubles();
        for (int h = 0; h < heads; h++) {
            l[h] = java.util.Arrays.copyOfRange(all, h * side * side, (h + 1) * side * side);
        }
        return QuadraticForm.gramAll(l, side);
    }

    Parameter factor() {
        return factor;
    }

    @Override
    public List<Parameter> parameters() {
        return List.of(factor);
    }

    @Override
    public AttentionBlock copy() {
        int side = groupCount + 1;
        double[] all = factor.value().toDoubles();
        double[][] l = new double[heads][];
        for (int h = 0; h < heads; h++) {
            l[h] = java.util.Arrays.copyOfRange(all, h * side * side, (h + 1) * side * side);
        }
        ConvertedAttention c = new ConvertedAttention(layer, ops, groups, groupCount, l);
        c.factor.setTrainable(factor.trainable());
        return c;
    }

    @Override
    public Gradient forward(HeadLayout layout, Tensor q, Tensor k, Tensor v, Tensor out) {
        layout.requireShapes(q, k, v, out);
        if (layout.heads() != heads || layout.headDim() != headDim) {
            throw new IllegalArgumentException("converted layer " + layer + " was calibrated for " + heads + " heads of dim "
                    + headDim + ", the layout has " + layout.heads() + " of dim " + layout.headDim());
        }
        double[] qd = finite("post-RoPE queries", q);
        double[] kd = finite("post-RoPE keys", k);
        double[] vd = finite("values", v);
        QuadraticAttentionShape s = new QuadraticAttentionShape(layout.batch(), layout.seqLen(), heads, layout.kvHeads(),
                headDim, groupCount);
        double[] m = gram();
        double[] o = ops.dense(s, qd, kd, vd, groups, m);
        for (int i = 0; i < o.length; i++) {
            out.set(i, o[i]);
        }
        return (dOut, dq, dk, dv) -> backward(s, qd, kd, vd, m, o, dOut, dq, dk, dv);
    }

    private double[] finite(String what, Tensor t) {
        int bad = t.firstNonFinite();
        if (bad >= 0) {
            throw new IllegalStateException("non-finite activation entering the converted OAL layer " + layer + ": " + what
                    + " element " + bad + " is " + t.get(bad));
        }
        return t.toDoubles();
    }

    /**
     * o_t = Σ_j s_j·v_j / Σ_j s_j, s_j = ε + φ_jᵀMφ_j, φ_j = [1, z(q_t, k_j)]:
     * ∂/∂s_j = dO·(v_j − o_t)/den; ∂s_j/∂z_g = ((M + Mᵀ)φ_j)_g; ∂z_g/∂q_i = k_ji/√d, ∂z_g/∂k_ji = q_i/√d (i in g).
     */
    private void backward(QuadraticAttentionShape s, double[] q, double[] k, double[] v, double[] m, double[] o,
                          Tensor dOut, Tensor dq, Tensor dk, Tensor dv) {
        int d = headDim;
        int side = groupCount + 1;
        int T = s.seqLen();
        double invSqrtD = 1.0 / Math.sqrt(d);
        double[] phi = new double[T * side];
        double[] sims = new double[T];
        double[] dqRow = new double[d];
        double[] w = new double[side];
        for (int b = 0; b < s.batch(); b++) {
            for (int h = 0; h < heads; h++) {
                int g = s.kvHeadOf(h);
                int mOff = h * side * side;
                for (int t = 0; t < T; t++) {
                    int qOff = s.queryOffset(b, t, h);
                    double den = 0.0;
                    for (int j = 0; j <= t; j++) {
                        int kOff = s.kvOffset(b, j, g);
                        int p = j * side;
                        java.util.Arrays.fill(phi, p, p + side, 0.0);
                        phi[p] = 1.0;
                        for (int i = 0; i < d; i++) {
                            phi[p + 1 + groups[h * d + i]] += (q[qOff + i] * invSqrtD) * k[kOff + i];
                        }
                        double quad = 0.0;
                        for (int a = 0; a < side; a++) {
                            for (int c = 0; c < side; c++) {
                                quad += phi[p + a] * m[mOff + a * side + c] * phi[p + c];
                            }
                        }
                        sims[j] = GroupedQuadraticAttentionOps.EPSILON + quad;
                        den += sims[j];
                    }
                    java.util.Arrays.fill(dqRow, 0.0);
                    for (int j = 0; j <= t; j++) {
                        int kOff = s.kvOffset(b, j, g);
                        double dS = 0.0;
                        for (int c = 0; c < d; c++) {
                            double centered = v[kOff + c] - o[qOff + c];
                            dS += dOut.get(qOff + c) * centered;
                            dv.add(kOff + c, sims[j] / den * dOut.get(qOff + c));
                        }
                        dS /= den;
                        int p = j * side;
                        for (int a = 1; a < side; a++) {
                            double grad = 0.0;
                            for (int c = 0; c < side; c++) {
                                grad += (m[mOff + a * side + c] + m[mOff + c * side + a]) * phi[p + c];
                            }
                            w[a] = dS * grad;
                        }
                        for (int i = 0; i < d; i++) {
                            double wi = w[1 + groups[h * d + i]] * invSqrtD;
                            dqRow[i] += wi * k[kOff + i];
                            dk.add(kOff + i, wi * q[qOff + i]);
                        }
                    }
                    for (int i = 0; i < d; i++) {
                        dq.add(qOff + i, dqRow[i]);
                    }
                }
            }
        }
    }
}
