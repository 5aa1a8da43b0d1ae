package org.mechspec.foldbias;

/** CPU twin of the {@code fold_rank_one_f64} kernel. */
final class CpuRankOneFold implements RankOneFold {
    @Override
    public double[] fold(double[] compactKeys, double[] beta, double[] u, int t, int d) {
        RankOneFold.validate(compactKeys, beta, u, t, d);
        double[] out = new double[t * d];
        for (int j = 0; j < t; j++) {
            for (int c = 0; c < d; c++) {
                int i = j * d + c;
                // Java never contracts a*b + c into an fma, matching __dadd_rn(__dmul_rn(...)) in the kernel.
                out[i] = compactKeys[i] + beta[j] * u[c];
            }
        }
        return out;
    }
}
