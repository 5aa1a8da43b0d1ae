package org.mechspec.pnmix;

/**
 * The online figures of protocols.md (pn-mix), accumulated over (call, query head) rows: {@code attention_kl} is the mean of
 * KL(p_ref‖p_quant) of the two rows' softmaxes (fp64, log-sum-exp), {@code attention_output_mse} the mean squared
 * output error over rows × head dims, {@code attention_output_cosine} the mean cosine of the output rows.
 */
final class AttentionErrors {
    private final int dim;
    private double klSum;
    private double sqSum;
    private double cosSum;
    private int rows;

    AttentionErrors(int dim) {
        this.dim = dim;
    }

    /**
     * One row: logits {@code [logitOffset, logitOffset + len)} and outputs {@code [outOffset, outOffset + dim)} of the
     * reference and of the quantized call; {@code query} and {@code head} only name the row in an error.
     */
    void add(double[] refLogits, double[] quantLogits, int logitOffset, int len, double[] refOut, double[] quantOut,
             int outOffset, int query, int head) {
        klSum += kl(refLogits, quantLogits, logitOffset, len);
        double dot = 0.0;
        double na = 0.0;
        double nb = 0.0;
        for (int k = 0; k < dim; k++) {
            double a = quantOut[outOffset + k];
            double b = refOut[outOffset + k];
            sqSum += (a - b) * (a - b);
            dot += a * b;
            na += a * a;
            nb += b * b;
        }
        if (na == 0.0 || nb == 0.0) {
            throw new IllegalStateException("attention output of query " + query + ", head " + head
                    + " is all zero: cosine similarity is undefined");
        }
        cosSum += dot / (StrictMath.sqrt(na) * StrictMath.sqrt(nb));
        rows++;
    }

    int rows() {
        return rows;
    }

    double meanKl() {
        return klSum / rows;
    }

    double outputMse() {
        return sqSum / ((double) rows * dim);
    }

    double meanCosine() {
        return cosSum / rows;
    }

    /** KL(p‖q) of the softmaxes of two logit rows (fp64, log-sum-exp). */
    static double kl(double[] refLogits, double[] quantLogits, int offset, int len) {
        double lseRef = logSumExp(refLogits, offset, len);
        double lseQuant = logSumExp(quantLogits, offset, len);
        double kl = 0.0;
        for (int j = 0; j < len; j++) {
            double lp = refLogits[offset + j] - lseRef;
            double lq = quantLogits[offset + j] - lseQuant;
            kl += StrictMath.exp(lp) * (lp - lq);
        }
        return kl;
    }

    private static double logSumExp(double[] x, int offset, int len) {
        double max = Double.NEGATIVE_INFINITY;
        for (int j = 0; j < len; j++) {
            max = Math.max(max, x[offset + j]);
        }
        double s = 0.0;
        for (int j = 0; j < len; j++) {
            s += StrictMath.exp(x[offset + j] - max);
        }
        return max + StrictMath.log(s);
    }
}
