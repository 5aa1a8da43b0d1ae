package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CpuBackend;

/**
 * The protocol on a small configuration (4 query heads over 2 KV heads of 8 dims, 2 sinks, groups of 4,
 * 12 prefill + 6 decode tokens), so each run takes milliseconds; counts are the protocol's own description.
 */
class PnMixProtocolTest {
    private static final long SEED = 11;
    private final PnMixConfig config = PnMixFixtures.small(4, 2, 8, 2, 4, 12, 6, 3, 1, 2);

    private Projections truth(PnMixConfig c) {
        return truth(c, SEED);
    }

    private Projections truth(PnMixConfig c, long seed) {
        return PnMixFixtures.syntheticTruth(c, seed, c.model().layout());
    }

    private PnMixResult run(PnMixConfig c, PackedCacheOps ops) {
        return run(c, ops, truth(c));
    }

    private PnMixResult run(PnMixConfig c, PackedCacheOps ops, Projections truth) {
        return new PnMixProtocol(c, ops, true).run(truth, KeyPlan.saliency());
    }

    /** Saliency over the non-sink tokens before {@code end} (2 KV heads, 4 pairs, 2 high). */
    private static PairMask saliency(Projections t, int end) {
        return PairSaliency.select(PairSaliency.scores(t, 2, end, PairLayout.ADJACENT), 2, 4, 2);
    }

    @Test
    void projectionsOfAnotherHeadShapeAreRejected() {
        Projections t = truth(config);
        Projections wider = new Projections(t.tokens(), t.queryHeads(), t.kvHeads(), 10, t.qPreRope(), t.kPreRope(),
                t.qRope(), t.kRope(), t.q(), t.k(), t.v());
        assertThatThrownBy(() -> new PnMixProtocol(config, new CpuPackedCacheOps(), true)
                .run(wider, KeyPlan.saliency()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("do not fit the protocol's 18 tokens");
    }

    @Test
    void withoutDecodeTokensOnlyThePrefillCallIsMade() {
        PnMixConfig c = PnMixFixtures.small(4, 2, 8, 2, 4, 12, 0, 3, 1, 2);
        PnMixResult r = run(c, new CpuPackedCacheOps());
        assertThat(r.calls().attentionCalls()).isEqualTo(1);
        assertThat(r.calls().onlineVsFinalMaxDelta()).isZero();
    }

    @Test
    void elapsedTimeIsSecondsOfThisRun() {
        long before = System.nanoTime();
        PnMixResult r = run(config, new CpuPackedCacheOps());
        double bound = (System.nanoTime() - before) / 1e9;
        assertThat(r.elapsedSeconds()).isBetween(0.0, bound);
    }

    @Test
    void thePeakAddsTheKernelsWorkingBytes() {
        // the same run on kernels reporting 0 and 10^6 working bytes: the peak differs by exactly 10^6
        PnMixResult none = run(config, new WorkingBytesOps(0));
        PnMixResult mega = run(config, new WorkingBytesOps(1_000_000));
        assertThat(mega.storage().peakAllocatedBytes() - none.storage().peakAllocatedBytes()).isEqualTo(1_000_000);
    }

    private static final class WorkingBytesOps extends DelegatingOps {
        private final long bytes;

        WorkingBytesOps(long bytes) {
            this.bytes = bytes;
        }

        @Override
        public long peakWorkingBytes() {
            return bytes;
        }
    }

    @Test
    void quantizedSinksShowAsSinkKeyError() {
        assertThat(run(config, new CpuPackedCacheOps()).quality().sinkKeyMaxError()).isZero();
        // 3/1-bit keys of N(0,1)-ish projections cannot reproduce fp16 sinks
        assertThat(BrokenPnMix.quantizedSinks(config, truth(config)).quality().sinkKeyMaxError()).isGreaterThan(1e-3);
    }

    @Test
    void recomputedSaliencyIsCountedAndReplacesTheMask() {
        Projections t = truth(config, 2); // seed 2: the masks over 12, 16 and 18 tokens all differ
        PnMixResult r = BrokenPnMix.recomputedSaliency(run(config, new CpuPackedCacheOps(), t), t);
        assertThat(r.saliency().saliencyComputations()).isEqualTo(1 + config.tokens().decode());
        // the last recomputation covers every non-sink token
        PairMask last = saliency(t, 18);
        assertThat(last).isNotEqualTo(saliency(t, 16)).isNotEqualTo(saliency(t, 12));
        assertThat(r.saliency().mask()).isEqualTo(last);
        assertThat(r.saliency().maskAfterPrefill()).containsExactly(saliency(t, 12).bytes());
        assertThat(r.saliency().maskUnchangedAfterDecode()).isFalse();
    }

    @Test
    void aMaskThatChangesAndComesBackStillCountsAsChanged() {
        Projections t = truth(config, 48); // seed 48: the mask moves during decode, and the last one is the prefill's
        assertThat(saliency(t, 18)).isEqualTo(saliency(t, 12));
        assertThat(saliency(t, 13)).isNotEqualTo(saliency(t, 12));
        PnMixResult r = BrokenPnMix.recomputedSaliency(run(config, new CpuPackedCacheOps(), t), t);
        assertThat(r.saliency().maskUnchangedAfterDecode()).isFalse();
    }

    @Test
    void oneCallPerStepForAllHeads() {
        // 1 prefill call, one per decode token, one final batched call
        assertThat(run(config, new CpuPackedCacheOps()).calls().attentionCalls()).isEqualTo(1 + 6 + 1);
        assertThat(BrokenPnMix.perHeadCalls(run(config, new CpuPackedCacheOps())).calls().attentionCalls())
                .isEqualTo(4 * (1 + 6 + 1));
    }

    @Test
    void countingOpsCountsFp32CallsToo() {
        StreamingCache cache = PnMixFixtures.filledCache(config, PnMixFixtures.randomMask(config, 1)
                .channelBits(8, PairLayout.ADJACENT, 3, 1), new byte[0], 10, 5, null);
        float[] q = new float[4 * 8];
        for (int i = 0; i < q.length; i++) {
            q[i] = (i % 7) * 0.25f - 0.5f;
        }
        CountingOps counted = new CountingOps(new CpuPackedCacheOps());
        float[] out = counted.attendFp32(cache.view(), q, 4, 1, false);
        assertThat(counted.attentionCalls()).isEqualTo(1);
        assertThat(Arrays.equals(out, new CpuPackedCacheOps().attendFp32(cache.view(), q, 4, 1, false))).isTrue();
    }

    @Test
    void experimentMetricsNameEveryRandomMaskAndTheClockSaltsTheSeed() {
        PnMixConfig c = PnMixFixtures.small(2, 1, 4, 1, 4, 9, 2, 3, 1, 2);
        byte[] tokens = PnMixFixtures.syntheticTokens(SEED, c.totalTokens());
        PnMixExperiment e = PnMixExperiment.run(0, tokens, "synthetic", c, CpuBackend.INSTANCE);
        var m = e.metrics();
        for (int i = 0; i < PnMixExperiment.RANDOM_MASKS; i++) {
            assertThat(m).containsEntry("random_mask_" + i + "_attention_kl", e.randomMasks()[i].quality().attentionKl());
        }
        // seed 0 salted with the clock must still differ from seed 0
        PnMixExperiment salted = BrokenPnMix.unseeded(0, tokens, c);
        assertThat(Arrays.equals(salted.truth().k(), e.truth().k())).isFalse();
    }
}
