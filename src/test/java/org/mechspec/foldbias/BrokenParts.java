package org.mechspec.foldbias;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.mechspec.compute.Backend;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.CpuBackendDecorator;

/**
 * Broken parts of the fold-bias mechanism, each handed in through a seam the mechanism has anyway (the fold, the
 * solvers, the backend's rounding), and the one broken intermediate no seam reaches: a cache refit after freezing.
 */
final class BrokenParts {
    private BrokenParts() {
    }

    /** The mechanism with one solver broken. */
    static FoldBias with(Solvers solvers) {
        return new FoldBias(CpuBackend.INSTANCE, KeySelector.TOP_BY_MAX_WEIGHT, OutputBound::tv, solvers,
                new CpuRankOneFold());
    }

    /** The mechanism with a broken fold. */
    static FoldBias with(RankOneFold fold) {
        return new FoldBias(CpuBackend.INSTANCE, KeySelector.TOP_BY_MAX_WEIGHT, OutputBound::tv, Solvers.EXACT, fold);
    }

    /** The fold adds −β·uᵀ instead of +β·uᵀ. */
    static final RankOneFold FLIPPED_FOLD_SIGN =
            (ck, beta, u, t, d) -> new CpuRankOneFold().fold(ck, Dense.scaled(beta, -1.0), u, t, d);

    /** The fold forgets the bias: K_f = C_k. */
    static final RankOneFold FOLD_DROPS_BIAS =
            (ck, beta, u, t, d) -> new CpuRankOneFold().fold(ck, new double[t], u, t, d);

    /** One rounding per element (Math.fma), unlike the twin the kernel must match. */
    static final RankOneFold FUSED_FOLD = (ck, beta, u, t, d) -> {
        RankOneFold.validate(ck, beta, u, t, d);
        double[] out = new double[t * d];
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.fma(beta[i / d], u[i % d], ck[i]);
        }
        return out;
    };

    /** The fold direction is the plain ridge fit H⁻¹Aᵀ1, without the mean(A·u) = 1 constraint. */
    static final Solvers RIDGE_WITHOUT_MEAN_CONSTRAINT = new ExactExcept() {
        @Override
        public double[] foldDirection(double[] a, int rows, int d, double lambda) {
            double[] ones = new double[rows];
            Arrays.fill(ones, 1.0);
            return FoldDirection.solveRidge(Dense.transposedTimesMatrix(a, rows, d, a, d), d, lambda,
                    Dense.transposedTimes(a, rows, d, ones));
        }
    };

    /** The KKT system's top-left block is 2AᵀA + λI instead of 2(AᵀA + λI). */
    static final Solvers KKT_RIDGE_NOT_DOUBLED = new ExactExcept() {
        @Override
        public double[] foldDirection(double[] a, int rows, int d, double lambda) {
            return FoldDirection.kkt(a, rows, d, lambda / 2);
        }
    };

    /** β from unconstrained least squares with negative weights clamped to zero, instead of NNLS. */
    static final Solvers CLAMPED_LEAST_SQUARES_FOR_NNLS = new ExactExcept() {
        @Override
        public double[] nnls(double[] a, int rows, int cols, double[] b) {
            double[] w = LeastSquares.solve(a, rows, cols, b, 1);
            for (int j = 0; j < w.length; j++) {
                w[j] = Math.max(0.0, w[j]);
            }
            return w;
        }
    };

    /**
     * Every least-squares fit answered with the first one's solution: the compact values C_v fit (the first) is
     * right, the value refit after rounding returns C_v unchanged (C_v' = C_v, no refit).
     */
    static Solvers staleLeastSquares() {
        return new ExactExcept() {
            private double[] first;

            @Override
            public double[] leastSquares(double[] x, int rows, int cols, double[] y, int yCols) {
                if (first == null) {
                    first = super.leastSquares(x, rows, cols, y, yCols);
                }
                return first.clone();
            }
        };
    }

    /** A backend whose fp16 rounding returns its input: the refit (and the cache) get the unrounded keys K_f. */
    static final Backend NO_FP16_ROUNDING = new CpuBackendDecorator() {
        @Override
        public double[] roundToHalf(double[] x) {
            return x.clone();
        }
    };

    /**
     * The run as it would be had online use refit the values to the full cache's answers on the test queries after
     * the cache was frozen: one more fit, marked after freeze, and a different cache serving the test queries.
     */
    static FoldBiasRun refitAfterFreeze(FoldBiasRun r, FoldBiasInputs in) {
        FoldBiasConfig c = in.config();
        int d = c.d();
        int mt = c.testQueries();
        int size = r.size();
        Backend cpu = CpuBackend.INSTANCE;
        OfflineFitter fitter = new OfflineFitter(Solvers.EXACT);
        fitter.freeze();
        double[] target = AttentionOps.output(cpu, in.testQueries(), mt, in.keys(), c.n(), d, in.values(), d, null);
        double[] x = AttentionOps.weights(cpu, in.testQueries(), mt, r.fold().roundedKeys(), size, d, null);
        FrozenCache refreshed = FrozenCache.freeze(r.fold().roundedKeys(),
                fitter.leastSquares("online value refresh", x, mt, size, target, d), size, d);
        List<String> log = new ArrayList<>(r.online().fitLog());
        log.addAll(fitter.log());
        FoldBiasRun.Online online = new FoldBiasRun.Online(r.online().cacheSha256AtFreeze(), refreshed.sha256(),
                r.online().fitsAfterFreeze() + fitter.fitsAfterFreeze(), log, refreshed.attend(cpu, in.testQueries(), mt));
        return new FoldBiasRun(r.config(), r.compaction(), r.fold(), online, r.evaluation());
    }

    /** The exact solvers; a broken one overrides the fit it breaks. */
    private abstract static class ExactExcept implements Solvers {
        @Override
        public double[] nnls(double[] a, int rows, int cols, double[] b) {
            return EXACT.nnls(a, rows, cols, b);
        }

        @Override
        public double[] leastSquares(double[] x, int rows, int cols, double[] y, int yCols) {
            return EXACT.leastSquares(x, rows, cols, y, yCols);
        }

        @Override
        public double[] foldDirection(double[] a, int rows, int d, double lambda) {
            return EXACT.foldDirection(a, rows, d, lambda);
        }
    }
}
