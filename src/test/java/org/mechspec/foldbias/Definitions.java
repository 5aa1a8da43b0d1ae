package org.mechspec.foldbias;

/**
 * protocols.md (fold-bias)'s quantities computed from their definitions with plain loops, independently of the mechanism's code
 * (no Dense, no AttentionOps, no backend): the checks compare the mechanism with these. fp64, StrictMath.
 */
final class Definitions {
    /** 64·eps = 128·u: the per-operation rounding allowance the fold-bias tolerances are stated in (see PropertyTolerance). */
    static final double ROUNDOFF = PropertyTolerance.ROUNDOFF;

    private Definitions() {
    }

    /** 1/√d, the logit scale. */
    static double scale(int d) {
        return 1.0 / StrictMath.sqrt(d);
    }

    /** Logits (q_i·k_j)·(1/√d) + bias_j [queries, keys]; bias may be null. */
    static double[] logits(double[] q, int queries, double[] k, int keys, int d, double[] bias) {
        double s = scale(d);
        double[] out = new double[queries * keys];
        for (int i = 0; i < queries; i++) {
            for (int j = 0; j < keys; j++) {
                double dot = 0.0;
                for (int c = 0; c < d; c++) {
                    dot += q[i * d + c] * k[j * d + c];
                }
                out[i * keys + j] = dot * s + (bias == null ? 0.0 : bias[j]);
            }
        }
        return out;
    }

    /** Row-wise softmax of logits [rows, cols], shifted by the row max. */
    static double[] softmax(double[] logits, int rows, int cols) {
        double[] p = new double[logits.length];
        for (int i = 0; i < rows; i++) {
            double max = Double.NEGATIVE_INFINITY;
            for (int j = 0; j < cols; j++) {
                max = Math.max(max, logits[i * cols + j]);
            }
            double sum = 0.0;
            for (int j = 0; j < cols; j++) {
                p[i * cols + j] = StrictMath.exp(logits[i * cols + j] - max);
                sum += p[i * cols + j];
            }
            for (int j = 0; j < cols; j++) {
                p[i * cols + j] /= sum;
            }
        }
        return p;
    }

    /** Attention weights softmax(q·kᵀ/√d + bias) [queries, keys]. */
    static double[] weights(double[] q, int queries, double[] k, int keys, int d, double[] bias) {
        return softmax(logits(q, queries, k, keys, d, bias), queries, keys);
    }

    /** p·v for weights [rows, keys] and values [keys, dv]. */
    static double[] mix(double[] p, int rows, int keys, double[] v, int dv) {
        double[] out = new double[rows * dv];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < keys; j++) {
                double w = p[i * keys + j];
                for (int c = 0; c < dv; c++) {
                    out[i * dv + c] += w * v[j * dv + c];
                }
            }
        }
        return out;
    }

    /** The full, uncompressed attention softmax(q·Kᵀ/√d)·V over all n keys of the inputs. */
    static double[] fullAttention(FoldBiasInputs in, double[] q, int queries) {
        FoldBiasConfig c = in.config();
        return mix(weights(q, queries, in.keys(), c.n(), c.d(), null), queries, c.n(), in.values(), c.d());
    }

    /** max_j s·Σ_c |q_ic|·|k_jc| + |bias_j| over keys, per query: the size of the dot products behind each logit. */
    static double[] logitScale(double[] q, int queries, double[] k, int keys, int d, double[] bias) {
        double s = scale(d);
        double[] out = new double[queries];
        for (int i = 0; i < queries; i++) {
            for (int j = 0; j < keys; j++) {
                double dot = 0.0;
                for (int c = 0; c < d; c++) {
                    dot += Math.abs(q[i * d + c] * k[j * d + c]);
                }
                out[i] = Math.max(out[i], dot * s + (bias == null ? 0.0 : Math.abs(bias[j])));
            }
        }
        return out;
    }

    /** mean over rows of ‖a_i − b_i‖₂ for a, b [rows, cols]. */
    static double meanRowDistance(double[] a, double[] b, int rows, int cols) {
        double total = 0.0;
        for (int i = 0; i < rows; i++) {
            double s = 0.0;
            for (int c = 0; c < cols; c++) {
                double x = a[i * cols + c] - b[i * cols + c];
                s += x * x;
            }
            total += StrictMath.sqrt(s);
        }
        return total / rows;
    }

    /**
     * x rounded to the nearest fp16 value, ties to even (IEEE 754 binary16: 10 fraction bits, exponents −14..15,
     * subnormals below 2^-14, overflow to ±∞ from 65520 = 65504 + half an ulp on). Finite x only.
     */
    static double nearestHalf(double x) {
        double a = Math.abs(x);
        if (a >= 65520.0) {
            return Math.copySign(Double.POSITIVE_INFINITY, x);
        }
        int exponent = Math.max(Math.getExponent(a), -14); // a = 0 gives −1023: the subnormal spacing applies
        double ulp = Math.scalb(1.0, exponent - 10);
        return Math.copySign(Math.rint(a / ulp) * ulp, x); // rint: round half to even; a/ulp is exact (power of 2)
    }
}
