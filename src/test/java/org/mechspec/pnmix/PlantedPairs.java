package org.mechspec.pnmix;

import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;

/**
 * Synthetic truth whose RoPE pairs differ in scale: pair p of KV head h has a log-normal scale s_hp shared by
 * its keys and by the queries of its group, the situation pair saliency is meant for. Values are N(0,1).
 */
final class PlantedPairs {
    static PnMixConfig config() {
        return PnMixFixtures.small(4, 2, 16, 4, 16, 52, 20, 3, 1, 2);
    }

    private PlantedPairs() {
    }

    static PnMixExperiment experiment(long seed) {
        return experiment(seed, CpuBackend.INSTANCE);
    }

    /** The same on {@code backend} (a property half's: an outside implementation's where one is judged). */
    static PnMixExperiment experiment(long seed, org.mechspec.compute.Backend backend) {
        return experiment(seed, PairSaliency::scores, backend);
    }

    /** The same with the mechanism's pair scores given. */
    static PnMixExperiment experiment(long seed, SaliencyScores saliency) {
        return experiment(seed, saliency, CpuBackend.INSTANCE);
    }

    private static PnMixExperiment experiment(long seed, SaliencyScores saliency, org.mechspec.compute.Backend backend) {
        PnMixConfig c = config();
        Rng rng = new Rng(seed);
        int d = c.model().headDim();
        int n = c.totalTokens();
        int group = c.model().queryHeads() / c.model().kvHeads();
        double[] scale = new double[c.model().kvHeads() * c.model().pairs()];
        for (int i = 0; i < scale.length; i++) {
            scale[i] = StrictMath.exp(rng.normal());
        }
        double[] q = new double[n * c.model().queryHeads() * d];
        double[] k = new double[n * c.model().kvChannels()];
        double[] v = new double[n * c.model().kvChannels()];
        for (int t = 0; t < n; t++) {
            for (int h = 0; h < c.model().kvHeads(); h++) {
                for (int ch = 0; ch < d; ch++) {
                    double s = scale[h * c.model().pairs() + ch / 2];
                    k[t * c.model().kvChannels() + h * d + ch] = HalfFloat.roundToHalf(s * rng.normal());
                    v[t * c.model().kvChannels() + h * d + ch] = HalfFloat.roundToHalf(rng.normal());
                    for (int qh = h * group; qh < (h + 1) * group; qh++) {
                        q[(t * c.model().queryHeads() + qh) * d + ch] = HalfFloat.roundToHalf(s * rng.normal());
                    }
                }
            }
        }
        Projections truth = new Projections(n, c.model().queryHeads(), c.model().kvHeads(), d, q, k, q, k, q, k, v);
        return PnMixExperiment.over(seed, truth, rng, "synthetic", c, backend, saliency);
    }
}
