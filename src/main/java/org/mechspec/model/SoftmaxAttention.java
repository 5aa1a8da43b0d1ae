package org.mechspec.model;

import java.util.Arrays;

/**
 * Causal grouped-query softmax attention, scale 1/√headDim: o_t = Σ_{j≤t} softmax_j(q_t·k_j/√d)·v_j.
 * Keeps the probabilities for the backward pass. Reductions in double, in fixed order; exp by StrictMath.
 */
public final class SoftmaxAttention implements AttentionBlock {

    @Override
    public Gradient forward(HeadLayout layout, Tensor q, Tensor k, Tensor v, Tensor out) {
        layout.requireShapes(q, k, v, out);
        int seq = layout.seqLen();
        int d = layout.headDim();
        double scale = 1.0 / Math.sqrt(d);
        // probs[((b·heads + h)·seq + t)·seq + j], j ≤ t
        double[] probs = new double[layout.batch() * layout.heads() * seq * seq];
        double[] scores = new double[seq];
        double[] outRow = new double[d];
        for (int b = 0; b < layout.batch(); b++) {
            for (int h = 0; h < layout.heads(); h++) {
                int g = layout.kvHeadOf(h);
                for (int t = 0; t < seq; t++) {
                    int qOff = layout.queryOffset(b, t, h);
                    double max = Double.NEGATIVE_INFINITY;
                    for (int j = 0; j <= t; j++) {
                        int kOff = layout.kvOffset(b, j, g);
                        double dot = 0.0;
                        for (int c = 0; c < d; c++) {
                            dot += q.get(qOff + c) * k.get(kOff + c);
                        }
                        scores[j] = dot * scale;
                        max = Math.max(max, scores[j]);
                    }
                    double sum = 0.0;
                    for (int j = 0; j <= t; j++) {
                        scores[j] = StrictMath.exp(scores[j] - max);
                        sum += scores[j];
                    }
                    int pRow = ((b * layout.heads() + h) * seq + t) * seq;
                    Arrays.fill(outRow, 0.0);
                    for (int j = 0; j <= t; j++) {
                        double p = scores[j] / sum;
                        probs[pRow + j] = p;
                        int vOff = layout.kvOffset(b, j, g);
                        for (int c = 0; c < d; c++) {
                            outRow[c] += p * v.get(vOff + c);
                        }
                    }
                    for (int c = 0; c < d; c++) {
                        out.set(qOff + c, outRow[c]);
                    }
                }
            }
        }
        return (dOut, dq, dk, dv) -> backward(layout, q, k, v, probs, dOut, dq, dk, dv);
    }

    private static void backward(HeadLayout layout, Tensor q, Tensor k, Tensor v, double[] probs, Tensor dOut,
                                 Tensor dq, Tensor dk, Tensor dv) {
        int seq = layout.seqLen();
        int d = layout.headDim();
        double scale = 1.0 / Math.sqrt(d);
        double[] dProb = new double[seq];
        double[] dqRow = new double[d];
        for (int b = 0; b < layout.batch(); b++) {
            for (int h = 0; h < layout.heads(); h++) {
                int g = layout.kvHeadOf(h);
                for (int t = 0; t < seq; t++) {
                    int qOff = layout.queryOffset(b, t, h);
                    int pRow = ((b * layout.heads() + h) * seq + t) * seq;
                    double weighted = 0.0; // Σ_j p_j·dp_j
                    for (int j = 0; j <= t; j++) {
                        int vOff = layout.kvOffset(b, j, g);
                        double dp = 0.0;
                        for (int c = 0; c < d; c++) {
                            dp += dOut.get(qOff + c) * v.get(vOff + c);
                        }
                        dProb[j] = dp;
                        weighted += probs[pRow + j] * dp;
                    }
                    Arrays.fill(dqRow, 0.0);
                    for (int j = 0; j <= t; j++) {
                        double p = probs[pRow + j];
                        double dScore = p * (dProb[j] - weighted) * scale;
                        int kvOff = layout.kvOffset(b, j, g);
                        for (int c = 0; c < d; c++) {
                            dqRow[c] += dScore * k.get(kvOff + c);
                            dk.add(kvOff + c, dScore * q.get(qOff + c));
                            dv.add(kvOff + c, p * dOut.get(qOff + c));
                        }
                    }
                    for (int c = 0; c < d; c++) {
                        dq.add(qOff + c, dqRow[c]);
                    }
                }
            }
        }
    }

    @Override
    public AttentionBlock copy() {
        return new SoftmaxAttention();
    }
}
