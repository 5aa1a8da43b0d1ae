package org.mechspec.pnmix;

import java.util.Arrays;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.compute.Rng;
import org.mechspec.spec.Records;

/**
 * Broken pn-mix mechanisms for the mutant tests: broken kernels and saliency passed through the seams the protocol
 * has anyway (the packed-cache ops, the pair scores), a broken config the mechanism would have run under while
 * reporting the asked one, or the record a broken protocol would have produced from the unbroken run.
 */
final class BrokenPnMix {
    private BrokenPnMix() {
    }

    static PnMixResult run(PnMixConfig c, Projections truth) {
        return new PnMixProtocol(c, new CpuPackedCacheOps(), true)
                .run(truth, KeyPlan.saliency());
    }

    /**
     * The cache ignores the sink setting: every token streams into the residual and is quantized. The record is the
     * asked config's, its sink error measured over the asked sink tokens of what the cache holds.
     */
    static PnMixResult quantizedSinks(PnMixConfig asked, Projections truth) {
        PnMixResult r = run(Records.with(asked, "sinkTokens", 0), truth);
        double[] keys = CacheContents.keys(r.finalCache(), new CpuPackedCacheOps());
        int c = asked.model().kvChannels();
        double sinkError = 0.0;
        for (int i = 0; i < asked.cache().sinkTokens() * c; i++) {
            sinkError = Math.max(sinkError, Math.abs(keys[i] - truth.k()[i]));
        }
        return Records.with(Records.with(r, "config", asked), "sinkKeyMaxError", sinkError);
    }

    /** RoPE, saliency and key widths pair (p, p + d/2) while the config asks for adjacent pairs. */
    static PnMixResult halfSplitWhereAdjacent(PnMixConfig asked, Projections halfSplitTruth) {
        return Records.with(run(asked.withLayout(PairLayout.HALF_SPLIT), halfSplitTruth), "config", asked);
    }

    /** The byte accounting adds the mask's bytes to the key total twice. */
    static PnMixResult maskCountedTwice(PnMixResult r) {
        return Records.with(r, "keyBytes", r.storage().keyBytes() + r.saliency().maskAfterPrefill().length);
    }

    /** One attention call per query head instead of one per step (each head's rows are those of a full call). */
    static PnMixResult perHeadCalls(PnMixResult r) {
        return Records.with(r, "attentionCalls", r.calls().attentionCalls() * r.config().model().queryHeads());
    }

    /**
     * What a protocol recomputing saliency over all tokens seen after every decode append would record: 1 + decode
     * computations, the last mask, and whether the mask ever differed from the prefill one.
     */
    static PnMixResult recomputedSaliency(PnMixResult r, Projections truth) {
        PnMixConfig c = r.config();
        PairMask mask = r.saliency().mask();
        boolean unchanged = true;
        for (int t = c.tokens().prefill(); t < c.totalTokens(); t++) {
            mask = PairSaliency.select(PairSaliency.scores(truth, c.cache().sinkTokens(), t + 1, c.model().layout()), c.model().kvHeads(),
                    c.model().pairs(), c.highPairsPerHead());
            unchanged &= Arrays.equals(mask.bytes(), r.saliency().maskAfterPrefill());
        }
        PnMixResult counted = Records.with(r, "saliencyComputations", 1 + c.tokens().decode());
        return Records.with(Records.with(counted, "mask", mask), "maskUnchangedAfterDecode", unchanged);
    }

    /** The least salient pairs get the high width: the scores negated, so the top-k picks the bottom ones. */
    static final SaliencyScores INVERTED_SALIENCY = (p, from, to, layout) -> {
        double[] s = PairSaliency.scores(p, from, to, layout);
        for (int i = 0; i < s.length; i++) {
            s[i] = -s[i];
        }
        return s;
    };

    /** The layer drawn from a stream salted with the clock, not from the seed alone. */
    static PnMixExperiment unseeded(long seed, byte[] tokens, PnMixConfig c) {
        Rng rng = new Rng(seed ^ System.nanoTime());
        Projections truth = new RandomRopeLayer(rng, c, c.model().layout()).project(tokens);
        return PnMixExperiment.over(seed, truth, rng, "synthetic", c, CpuBackend.INSTANCE);
    }

    /** 1-bit groups keep min and max as their levels instead of the conditional means. */
    static final class MinMaxOneBitOps extends DelegatingOps {
        @Override
        public PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit) {
            return cpu.quantizePerChannel(x, tokens, bits, OneBitLevels.MIN_MAX);
        }

        @Override
        public PackedBlock quantizePerToken(double[] x, int tokens, int channels, int groupChannels, int bits,
                                            OneBitLevels oneBit) {
            return cpu.quantizePerToken(x, tokens, channels, groupChannels, bits, OneBitLevels.MIN_MAX);
        }
    }

    /** Every call lets each query see the whole cache (the final batched call is no longer causal). */
    static final class NonCausalOps extends DelegatingOps {
        @Override
        public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal,
                                      boolean withLogits) {
            return cpu.attend(cache, q, queryHeads, queryLen, false, withLogits);
        }
    }
}
