package org.mechspec.foldbias;

import org.mechspec.compute.Backend;

/**
 * The fold-bias mechanism end to end (protocols.md, fold-bias): compaction (selection, NNLS β, least-squares C_v), the fold
 * direction, the rank-one fold, fp16 rounding, the value refit, freezing, online use of the frozen cache, and
 * the evaluation paths the metrics compare. Attention and rounding run on the given backend.
 */
public final class FoldBias {
    private final Backend backend;
    private final KeySelector selector;
    private final TvBound tvBound;
    private final Solvers solvers;
    private final RankOneFold fold;

    public FoldBias(Backend backend) {
        this(backend, KeySelector.on(backend), OutputBound::tv);
    }

    /** The mechanism with the given key selection and TV bound (the protocol's: KeySelector.on(backend), OutputBound::tv). */
    FoldBias(Backend backend, KeySelector selector, TvBound tvBound) {
        this(backend, selector, tvBound, Solvers.on(backend), RankOneFold.on(backend));
    }

    /** The mechanism built from the given parts; the protocol's are those of {@link #FoldBias(Backend)}. */
    FoldBias(Backend backend, KeySelector selector, TvBound tvBound, Solvers solvers, RankOneFold fold) {
        this.backend = backend;
        this.selector = selector;
        this.tvBound = tvBound;
        this.solvers = solvers;
        this.fold = fold;
    }

    public FoldBiasRun run(FoldBiasInputs in) {
        FoldBiasConfig c = in.config();
        int d = c.d();
        int m = c.referenceQueries();
        int mt = c.testQueries();
        double[] q = in.referenceQueries();
        double[] qt = in.testQueries();
        OfflineFitter fitter = new OfflineFitter(solvers);

        // Offline: compaction, fold, rounding, value refit.
        Compaction comp = Compaction.fit(backend, in, fitter, selector);
        int size = comp.size();
        double[] a = Dense.scaled(q, c.scale());
        double[] u = fitter.foldDirection(a, m, d, c.lambda());
        double[] uRef = fitter.foldDirectionReference(a, m, d, c.lambda());
        double[] kf = fold.fold(comp.compactKeys(), comp.beta(), u, size, d);
        double[] kh = backend.roundToHalf(kf);
        double[] refitWeights = AttentionOps.weights(backend, q, m, kh, size, d, null);
        double[] cvRefit = fitter.leastSquares("value refit C_v' on the rounded keys", refitWeights, m, size,
                comp.target(), d);

        // Freeze, then online use: the test queries read the frozen cache through the plain attention path.
        FrozenCache cache = FrozenCache.freeze(kh, cvRefit, size, d);
        fitter.freeze();
        String shaAtFreeze = cache.sha256();
        double[] deployed = cache.attend(backend, qt, mt);
        String shaAfterOnline = cache.sha256();

        FoldBiasRun.Fold folded = new FoldBiasRun.Fold(a, u, uRef, kf, kh, refitWeights, cvRefit);
        FoldBiasRun.Online online = new FoldBiasRun.Online(shaAtFreeze, shaAfterOnline, fitter.fitsAfterFreeze(),
                fitter.log(), deployed);
        return new FoldBiasRun(c, comp, folded, online, evaluate(in, comp, kf, kh, cvRefit));
    }

    /** The evaluation paths on the test queries: references for the metrics, not part of the deployed cache. */
    private FoldBiasRun.Evaluation evaluate(FoldBiasInputs in, Compaction comp, double[] kf, double[] kh,
                                            double[] cvRefit) {
        FoldBiasConfig c = in.config();
        int d = c.d();
        int mt = c.testQueries();
        int size = comp.size();
        double[] qt = in.testQueries();
        double[] ck = comp.compactKeys();
        double[] cv = comp.compactValues();
        double[] beta = comp.beta();
        double[] unrounded = AttentionOps.output(backend, qt, mt, kf, size, d, cvRefit, d, null);
        double[] biased = AttentionOps.output(backend, qt, mt, ck, size, d, cv, d, beta);
        double[] dropped = AttentionOps.output(backend, qt, mt, ck, size, d, cv, d, null);
        double[] sameValue = AttentionOps.output(backend, qt, mt, kh, size, d, cv, d, null);
        double[] bounds = outputBounds(qt, mt, d, c.scale(), ck, kh, beta, cv, size);
        return new FoldBiasRun.Evaluation(unrounded, biased, dropped, sameValue, bounds);
    }

    /** Per test query: the bound from the biased weights p and the exact logit difference δ. */
    private double[] outputBounds(double[] qt, int mt, int d, double scale, double[] ck, double[] kh, double[] beta,
                                  double[] cv, int size) {
        double[] p = AttentionOps.weights(backend, qt, mt, ck, size, d, beta);
        double[] keyShift = Dense.minus(kh, ck);
        double[] logitShift = Dense.scaled(Dense.timesTransposed(qt, mt, d, keyShift, size), scale);
        double rangeNorm = OutputBound.valueRangeNorm(cv, size, d);
        double[] bounds = new double[mt];
        double[] pi = new double[size];
        double[] delta = new double[size];
        for (int i = 0; i < mt; i++) {
            for (int j = 0; j < size; j++) {
                pi[j] = p[i * size + j];
                delta[j] = logitShift[i * size + j] - beta[j];
            }
            bounds[i] = tvBound.tv(pi, delta) * rangeNorm;
        }
        return bounds;
    }
}
