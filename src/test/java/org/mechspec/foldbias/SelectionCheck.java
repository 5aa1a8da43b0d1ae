package org.mechspec.foldbias;

/**
 * compaction_selects_top_weight_keys: the keys the compaction selected are the t with the largest maximum attention
 * weight over the reference queries (ties to the lower index), recomputed from the raw inputs.
 */
final class SelectionCheck {
    private SelectionCheck() {
    }

    /** @param mismatches keys whose membership differs from the definition's by more than rounding */
    record Result(long mismatches, String detail) {
        boolean holds() {
            return mismatches == 0;
        }
    }

    /** The definition's choice: repeatedly the highest remaining score (the lower index on ties), in index order. */
    static boolean[] topByScore(double[] score, int t) {
        boolean[] chosen = new boolean[score.length];
        for (int r = 0; r < t; r++) {
            int best = -1;
            for (int j = 0; j < score.length; j++) {
                if (!chosen[j] && (best < 0 || score[j] > score[best])) {
                    best = j;
                }
            }
            chosen[best] = true;
        }
        return chosen;
    }

    static Result of(FoldBiasInputs in, int[] selected) {
        FoldBiasConfig c = in.config();
        int d = c.d();
        int n = c.n();
        int m = c.referenceQueries();
        double[] w = Definitions.weights(in.referenceQueries(), m, in.keys(), n, d, null);
        double[] score = new double[n];
        for (int j = 0; j < n; j++) {
            for (int i = 0; i < m; i++) {
                score[j] = Math.max(score[j], w[i * n + j]);
            }
        }
        boolean[] expected = topByScore(score, c.t());
        double cut = Double.POSITIVE_INFINITY; // the t-th largest score
        for (int j = 0; j < n; j++) {
            cut = expected[j] ? Math.min(cut, score[j]) : cut;
        }
        // A weight's relative error in either computation is within ROUNDOFF·(d·Λ + n), Λ the largest logit's dot
        // product size (d-term dot products, exp, an n-term normaliser); keys that close to the cut are rounding ties.
        double logits = 0.0;
        for (double x : Definitions.logitScale(in.referenceQueries(), m, in.keys(), n, d, null)) {
            logits = Math.max(logits, x);
        }
        double tie = 2 * Definitions.ROUNDOFF * (d * logits + n) * cut;
        boolean[] actual = new boolean[n];
        for (int j : selected) {
            actual[j] = true;
        }
        long mismatches = 0;
        StringBuilder detail = new StringBuilder();
        for (int j = 0; j < n; j++) {
            if (actual[j] != expected[j] && Math.abs(score[j] - cut) > tie) {
                mismatches++;
                if (detail.length() < 200) {
                    detail.append(actual[j] ? " +" : " -").append(j).append("(").append(score[j]).append(")");
                }
            }
        }
        return new Result(mismatches, "cut " + cut + ", selected(+)/missed(-):" + detail);
    }
}
