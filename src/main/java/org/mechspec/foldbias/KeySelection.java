package org.mechspec.foldbias;

import java.util.Arrays;

/** Which keys a compaction keeps: the t with the largest maximum attention weight over the reference queries. */
final class KeySelection {
    private KeySelection() {
    }

    /**
     * @param weights attention weights [queries, keys]
     * @return the chosen key indices in increasing index order (ties in the score go to the lower index)
     */
    static int[] topByMaxWeight(double[] weights, int queries, int keys, int t) {
        if (t > keys) {
            throw new IllegalArgumentException("t (compact keys) = " + t + " exceeds the " + keys + " keys available");
        }
        double[] score = new double[keys];
        Arrays.fill(score, Double.NEGATIVE_INFINITY);
        for (int i = 0; i < queries; i++) {
            for (int j = 0; j < keys; j++) {
                score[j] = Math.max(score[j], weights[i * keys + j]);
            }
        }
        Integer[] order = new Integer[keys];
        for (int j = 0; j < keys; j++) {
            order[j] = j;
        }
        // Stable sort by descending score keeps equal scores in increasing index order.
        Arrays.sort(order, (x, y) -> Double.compare(score[y], score[x]));
        int[] chosen = new int[t];
        for (int r = 0; r < t; r++) {
            chosen[r] = order[r];
        }
        Arrays.sort(chosen);
        return chosen;
    }
}
