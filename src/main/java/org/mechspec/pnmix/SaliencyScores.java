package org.mechspec.pnmix;

/** Pair scores [kvHead][pair] over tokens [from, to): what the mask is chosen from ({@link PairSaliency#scores}). */
@FunctionalInterface
interface SaliencyScores {
    double[] scores(Projections truth, int from, int to, PairLayout layout);
}
