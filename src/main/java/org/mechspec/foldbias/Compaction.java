package org.mechspec.foldbias;

import java.util.Arrays;
import org.mechspec.compute.Backend;

/**
 * Attention Matching compaction of n keys/values to a compact set with a per-key logit bias β.
 *
 * @param selected the t keys with the largest max attention weight, in index order
 * @param nnlsMatrix E[:, selected], E = exp(s − row max), s = Q·Kᵀ/√d over all n keys [m, t]
 * @param nnlsTarget rowsum(E) [m]
 * @param weights NNLS weights w ≥ 0 on the selected keys after pruning (pruned ones exactly 0) [t]
 * @param kept indices (into the n keys) with weight > {@link FoldBiasConfig#PRUNE_WEIGHT}, in index order
 * @param compactKeys C_k = K[kept] [size, d]
 * @param beta β = ln w on the kept keys [size]
 * @param compactValues C_v = lstsq(softmax(Q·C_kᵀ/√d + β), Y) [size, d]
 * @param target Y = softmax(Q·Kᵀ/√d)·V on the reference queries [m, d]
 */
public record Compaction(int[] selected, double[] nnlsMatrix, double[] nnlsTarget, double[] weights, int[] kept,
                  double[] compactKeys, double[] beta, double[] compactValues, double[] target) {

    public int size() {
        return kept.length;
    }

    static Compaction fit(Backend backend, FoldBiasInputs in, OfflineFitter fitter, KeySelector selector) {
        FoldBiasConfig c = in.config();
        int d = c.d();
        int n = c.n();
        int m = c.referenceQueries();
        double[] q = in.referenceQueries();
        double[] k = in.keys();

        double[] attention = AttentionOps.weights(backend, q, m, k, n, d, null);
        int[] selected = requireSelection(selector.select(attention, m, n, c.t()), n, c.t());

        double[] e = shiftedExpScores(q, k, m, n, d, c.scale());
        double[] target = rowSums(e, m, n);
        double[] eSel = Dense.columns(e, m, n, selected);
        double[] w = fitter.nnls("beta (NNLS on exp(beta))", eSel, m, selected.length, target);

        int keptCount = 0;
        for (int j = 0; j < selected.length; j++) {
            if (w[j] > FoldBiasConfig.PRUNE_WEIGHT) {
                keptCount++;
            } else {
                w[j] = 0.0; // no mass: the key leaves the compact set
            }
        }
        if (keptCount == 0) {
            throw new ArithmeticException("compaction: every NNLS weight is <= " + FoldBiasConfig.PRUNE_WEIGHT
                    + ", no key carries mass");
        }
        int[] kept = new int[keptCount];
        double[] beta = new double[keptCount];
        for (int j = 0, r = 0; j < selected.length; j++) {
            if (w[j] > FoldBiasConfig.PRUNE_WEIGHT) {
                kept[r] = selected[j];
                beta[r] = StrictMath.log(w[j]);
                r++;
            }
        }
        double[] ck = Dense.rows(k, d, kept);

        double[] y = AttentionOps.output(backend, q, m, k, n, d, in.values(), d, null);
        double[] x = AttentionOps.weights(backend, q, m, ck, keptCount, d, beta);
        double[] cv = fitter.leastSquares("compact values C_v", x, m, keptCount, y, d);
        return new Compaction(selected, eSel, target, w, kept, ck, beta, cv, y);
    }

    /** A selection must name t distinct keys in increasing order: the rest of the fit relies on it. */
    private static int[] requireSelection(int[] selected, int n, int t) {
        if (selected.length != t) {
            throw new IllegalStateException("key selection returned " + selected.length + " keys, not t = " + t);
        }
        for (int r = 0; r < t; r++) {
            if (selected[r] < 0 || selected[r] >= n || (r > 0 && selected[r] <= selected[r - 1])) {
                throw new IllegalStateException("key selection must be increasing indices in [0, " + n + "), got "
                        + Arrays.toString(selected));
            }
        }
        return selected;
    }

    /** E = exp(s − m_row), s = q·kᵀ·scale, m_row the row max over all keys. */
    static double[] shiftedExpScores(double[] q, double[] k, int m, int n, int d, double scale) {
        double[] s = Dense.scaled(Dense.timesTransposed(q, m, d, k, n), scale);
        for (int i = 0; i < m; i++) {
            double max = Double.NEGATIVE_INFINITY;
            for (int j = 0; j < n; j++) {
                max = Math.max(max, s[i * n + j]);
            }
            for (int j = 0; j < n; j++) {
                s[i * n + j] = StrictMath.exp(s[i * n + j] - max);
            }
        }
        return s;
    }

    private static double[] rowSums(double[] a, int rows, int cols) {
        double[] out = new double[rows];
        for (int i = 0; i < rows; i++) {
            double sum = 0.0;
            for (int j = 0; j < cols; j++) {
                sum += a[i * cols + j];
            }
            out[i] = sum;
        }
        return out;
    }
}
