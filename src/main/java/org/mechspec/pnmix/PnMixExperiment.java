package org.mechspec.pnmix;

import org.mechspec.compute.Backend;
import org.mechspec.compute.Rng;

/**
 * One seed of pn-mix end to end: Hamlet tokens, the layer drawn from Rng(seed), the mechanism's run, and the
 * baselines the extra contracts compare with. The seed's stream continues after W_v with the random masks.
 *
 * @param main the mechanism (saliency mask, 3/1-bit keys)
 * @param randomMasks the same run with each of {@value #RANDOM_MASKS} random masks of the same ratio
 * @param uniform the same run with uniform 2-bit keys (equal quantized key bytes, no mask)
 */
public record PnMixExperiment(long seed, String datasetSha256, Projections truth, PnMixResult main,
                              PnMixResult[] randomMasks, PnMixResult uniform) {
    public static final int RANDOM_MASKS = 8;
    public static final int UNIFORM_KEY_BITS = 2;

    public static PnMixExperiment run(long seed, Backend backend) {
        PnMixConfig config = PnMixConfig.pinned();
        HamletTokens.Tokens tokens = HamletTokens.first(config.totalTokens());
        return run(seed, tokens.bytes(), tokens.fileSha256(), config, backend);
    }

    /** The same over any token bytes (tests use synthetic ones, so they run without the data set). */
    public static PnMixExperiment run(long seed, byte[] tokens, String datasetSha256, PnMixConfig config,
                                      Backend backend) {
        Rng rng = new Rng(seed);
        Projections truth = new RandomRopeLayer(rng, config).project(tokens);
        return over(seed, truth, rng, datasetSha256, config, backend);
    }

    /** The mechanism and its baselines over given truth; {@code rng} continues with the random masks. */
    public static PnMixExperiment over(long seed, Projections truth, Rng rng, String datasetSha256, PnMixConfig config,
                                       Backend backend) {
        return over(seed, truth, rng, datasetSha256, config, backend, PairSaliency::scores);
    }

    /** The same with the mechanism's pair scores given (the baselines use no saliency). */
    static PnMixExperiment over(long seed, Projections truth, Rng rng, String datasetSha256, PnMixConfig config,
                                Backend backend, SaliencyScores saliency) {
        PnMixResult main = new PnMixProtocol(config, PackedCacheOps.forBackend(backend), saliency, true)
                .run(truth, KeyPlan.saliency());
        PairMask[] masks = RandomMasks.draw(rng, RANDOM_MASKS, config.model().kvHeads(), config.model().pairs(), config.highPairsPerHead());
        PnMixResult[] random = new PnMixResult[masks.length];
        for (int m = 0; m < masks.length; m++) {
            random[m] = new PnMixProtocol(config, PackedCacheOps.forBackend(backend), false)
                    .run(truth, KeyPlan.fixedMask(masks[m]));
        }
        PnMixResult uniform = new PnMixProtocol(config.withKeyBits(UNIFORM_KEY_BITS, UNIFORM_KEY_BITS),
                PackedCacheOps.forBackend(backend), false).run(truth, KeyPlan.uniform(UNIFORM_KEY_BITS));
        return new PnMixExperiment(seed, datasetSha256, truth, main, random, uniform);
    }

    /** The mechanism's figures plus every baseline's attention KL, for bit-for-bit comparison of two runs. */
    public java.util.Map<String, Object> metrics() {
        java.util.Map<String, Object> m = new java.util.LinkedHashMap<>(main.metrics());
        for (int i = 0; i < randomMasks.length; i++) {
            m.put("random_mask_" + i + "_attention_kl", randomMasks[i].quality().attentionKl());
        }
        m.put("random_mask_attention_kl_mean", randomMaskKlMean());
        m.put("uniform_2bit_attention_kl", uniform.quality().attentionKl());
        return m;
    }

    public double randomMaskKlMean() {
        double s = 0.0;
        for (PnMixResult r : randomMasks) {
            s += r.quality().attentionKl();
        }
        return s / randomMasks.length;
    }
}
