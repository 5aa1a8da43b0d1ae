package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.CpuPackedCacheOps;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.PackedAttention;
import org.mechspec.compute.PackedBlock;
import org.mechspec.compute.PackedCacheOps;
import org.mechspec.compute.PackedKvCache;

/**
 * Each pn-mix check reports false on a deliberately broken mechanism, and true on the unbroken one over the same
 * input. Inputs are synthetic (the pinned protocol over random printable bytes), so this runs without data.
 */
@Tag("pn-mix")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PnMixMutantsTest {
    private static final long SEED = 42;
    private final PnMixConfig pinned = PnMixConfig.pinned();
    /** One run per mutant, held by this class's instance, so every launch computes its own. */
    private final Map<Mutant, PnMixResult> runs = new EnumMap<>(Mutant.class);
    private static final double TIGHT = 1e-12;

    private Projections truth(Mutant m) {
        return PnMixFixtures.syntheticTruth(pinned, SEED, PnMixProtocol.effectiveLayout(pinned, m));
    }

    private synchronized PnMixResult run(Mutant m) {
        return runs.computeIfAbsent(m, k -> run(k, new CpuPackedCacheOps(), truth(k)));
    }

    private PnMixResult run(Mutant m, PackedCacheOps ops, Projections truth) {
        return new PnMixProtocol(pinned, ops, CpuBackend.INSTANCE, m, true).run(truth, KeyPlan.saliency());
    }

    @Test
    void theSpecifiedMechanismPassesEveryCheck() {
        PnMixResult r = run(Mutant.NONE);
        Projections t = truth(Mutant.NONE);
        assertThat(PnMixChecks.byteAccountingExact(r)).isTrue();
        assertThat(PnMixChecks.tokenAccountingExact(r)).isTrue();
        assertThat(PnMixChecks.sinkKeysExact(r, t.k(), 0.0)).isTrue();
        assertThat(PnMixChecks.saliencyComputedOnce(r)).isTrue();
        assertThat(PnMixChecks.maskUnchangedAfterDecode(r)).isTrue();
        assertThat(PnMixChecks.saliencyMaskMismatches(r, t)).isZero();
        assertThat(PnMixChecks.ropePairNormMaxError(t, PairLayout.ADJACENT)).isLessThanOrEqualTo(TIGHT);
        assertThat(PnMixChecks.quantizerLevelMismatches(r.finalCache(), t.k(), t.v())).isZero();
        assertThat(PnMixChecks.packRoundTripMismatches(r.finalCache(), new CpuPackedCacheOps())).isZero();
        assertThat(PnMixChecks.packedMatchesOracle(r, TIGHT)).isTrue();
        assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(r, TIGHT)).isTrue();
        assertThat(PnMixChecks.attentionCallsCounted(r)).isTrue();
        PnMixExperiment planted = PlantedPairs.experiment(SEED);
        assertThat(PnMixChecks.saliencyBeatsRandomMasks(planted)).isTrue();
        assertThat(PnMixChecks.mixedBeatsUniformAtEqualBytes(planted)).isTrue();
        PnMixConfig small = PlantedPairs.config();
        byte[] tokens = PnMixFixtures.syntheticTokens(SEED, small.totalTokens());
        assertThat(PnMixChecks.metricsIdentical(
                PnMixExperiment.run(SEED, tokens, "synthetic", small, CpuBackend.INSTANCE, Mutant.NONE).metrics(),
                PnMixExperiment.run(SEED, tokens, "synthetic", small, CpuBackend.INSTANCE, Mutant.NONE).metrics())).isTrue();
        assertThat(PnMixKernelChecks.quantizePackMismatches(new CpuPackedCacheOps(), new CpuPackedCacheOps(), SEED)).isZero();
        PnMixKernelChecks.AttentionCase a = PnMixKernelChecks.attentionCase(SEED, 1);
        assertThat(PnMixKernelChecks.attentionFp64(new CpuPackedCacheOps(), a).holds()).isTrue();
        assertThat(PnMixKernelChecks.attentionFp32(new CpuPackedCacheOps(), a).holds()).isTrue();
    }

    @Test
    void countingAByteTwiceBreaksByteAccounting() {
        assertThat(PnMixChecks.byteAccountingExact(run(Mutant.COUNT_BYTE_TWICE))).isFalse();
    }

    @Test
    void quantizingSinksBreaksSinkKeysAndTokenAccounting() {
        PnMixResult r = run(Mutant.QUANTIZE_SINKS);
        assertThat(PnMixChecks.sinkKeysExact(r, truth(Mutant.QUANTIZE_SINKS).k(), 0.0)).as("sink error %s", r.sinkKeyMaxError()).isFalse();
        assertThat(PnMixChecks.tokenAccountingExact(r)).isFalse();
    }

    @Test
    void recomputingSaliencyDuringDecodeBreaksComputedOnceAndTheUnchangedMask() {
        assertThat(PnMixChecks.saliencyComputedOnce(run(Mutant.RECOMPUTE_SALIENCY_DURING_DECODE))).isFalse();
        // Decode tokens whose low pairs are 20x larger: recomputed saliency must move the mask.
        Projections t = truth(Mutant.NONE);
        PairMask prefillMask = run(Mutant.NONE).mask();
        int d = pinned.headDim();
        for (int tok = pinned.prefillTokens(); tok < pinned.totalTokens(); tok++) {
            for (int h = 0; h < pinned.queryHeads(); h++) {
                boost(t.q(), (tok * pinned.queryHeads() + h) * d, prefillMask, h / (pinned.queryHeads() / pinned.kvHeads()));
            }
            for (int h = 0; h < pinned.kvHeads(); h++) {
                boost(t.k(), tok * pinned.kvChannels() + h * d, prefillMask, h);
            }
        }
        PnMixResult r = run(Mutant.RECOMPUTE_SALIENCY_DURING_DECODE, new CpuPackedCacheOps(), t);
        assertThat(PnMixChecks.maskUnchangedAfterDecode(r)).isFalse();
        assertThat(PnMixChecks.maskUnchangedAfterDecode(run(Mutant.NONE, new CpuPackedCacheOps(), t))).isTrue();
    }

    private void boost(double[] rows, int base, PairMask mask, int kvHead) {
        for (int c = 0; c < pinned.headDim(); c++) {
            if (!mask.high(kvHead, c / 2)) {
                rows[base + c] = HalfFloat.roundToHalf(rows[base + c] * 20);
            }
        }
    }

    @Test
    void halfSplitPairsWhereAdjacentWasAskedBreakRopeNormsAndSaliency() {
        PnMixResult r = run(Mutant.HALF_SPLIT_WHERE_ADJACENT);
        Projections t = truth(Mutant.HALF_SPLIT_WHERE_ADJACENT);
        assertThat(PnMixChecks.ropePairNormMaxError(t, PairLayout.ADJACENT)).isGreaterThan(TIGHT);
        assertThat(PnMixChecks.saliencyMaskMismatches(r, t)).isPositive();
    }

    @Test
    void minMaxLevelsForOneBitBreakTheQuantizerCheck() {
        PnMixResult r = run(Mutant.MIN_MAX_ONE_BIT);
        Projections t = truth(Mutant.MIN_MAX_ONE_BIT);
        assertThat(PnMixChecks.quantizerLevelMismatches(r.finalCache(), t.k(), t.v())).isPositive();
        assertThat(r.keyMse()).as("min-max levels waste the 1-bit code").isGreaterThan(run(Mutant.NONE).keyMse());
    }

    @Test
    void nonCausalFinalCallBreaksOnlineVsFinal() {
        assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(run(Mutant.FINAL_CALL_NOT_CAUSAL), TIGHT)).isFalse();
    }

    @Test
    void perHeadAttentionCallsBreakTheCallCount() {
        PnMixResult r = run(Mutant.PER_HEAD_ATTENTION_CALLS);
        assertThat(PnMixChecks.attentionCallsCounted(r)).as("%d calls", r.attentionCalls()).isFalse();
    }

    @Test
    void invertedSaliencyLosesToRandomMasksAndToUniformKeys() {
        PnMixExperiment e = PlantedPairs.experiment(SEED, Mutant.INVERT_SALIENCY);
        assertThat(PnMixChecks.saliencyBeatsRandomMasks(e)).isFalse();
        assertThat(PnMixChecks.mixedBeatsUniformAtEqualBytes(e)).isFalse();
        assertThat(PnMixChecks.saliencyMaskMismatches(run(Mutant.INVERT_SALIENCY), truth(Mutant.INVERT_SALIENCY))).isPositive();
    }

    @Test
    void unseededInitializationBreaksSameSeedIdentity() {
        PnMixConfig small = PlantedPairs.config();
        byte[] tokens = PnMixFixtures.syntheticTokens(SEED, small.totalTokens());
        assertThat(PnMixChecks.metricsIdentical(
                PnMixExperiment.run(SEED, tokens, "synthetic", small, CpuBackend.INSTANCE, Mutant.UNSEEDED_INIT).metrics(),
                PnMixExperiment.run(SEED, tokens, "synthetic", small, CpuBackend.INSTANCE, Mutant.UNSEEDED_INIT).metrics())).isFalse();
    }

    /** A packer that drops each code's top bit (for widths of 2 and more). */
    private static final class TopBitDroppingOps extends DelegatingOps {
        @Override
        public byte[] packPerChannel(int[] codes, int tokens, int[] bits) {
            int[] cut = codes.clone();
            for (int i = 0; i < cut.length; i++) {
                int b = bits[i % bits.length];
                cut[i] = b >= 2 ? cut[i] & ((1 << (b - 1)) - 1) : cut[i];
            }
            return cpu.packPerChannel(cut, tokens, bits);
        }
    }

    @Test
    void aPackerDroppingTheTopBitBreaksRoundTripsAndBitEquality() {
        PackedCacheOps broken = new TopBitDroppingOps();
        assertThat(PnMixChecks.codeRoundTripMismatches(new CpuPackedCacheOps(), new int[] {3, 2, 1, 0}, 4, new int[] {2}, 1, 2)).isZero();
        assertThat(PnMixChecks.packRoundTripMismatches(run(Mutant.NONE).finalCache(), broken)).isPositive();
        assertThat(PnMixChecks.codeRoundTripMismatches(broken, new int[] {3, 2, 1, 0}, 4, new int[] {2}, 1, 2)).isPositive();
        assertThat(PnMixKernelChecks.quantizePackMismatches(broken, new CpuPackedCacheOps(), SEED)).isPositive();
    }

    /** An attention kernel that reads every group's first key byte inverted. */
    private static final class MisreadingOps extends DelegatingOps {
        @Override
        public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal, boolean withLogits) {
            return cpu.attend(misread(cache), q, queryHeads, queryLen, causal, withLogits);
        }

        @Override
        public float[] attendFp32(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal) {
            return cpu.attendFp32(misread(cache), q, queryHeads, queryLen, causal);
        }

        private static PackedKvCache misread(PackedKvCache c) {
            List<PackedKvCache.Group> groups = new ArrayList<>();
            for (PackedKvCache.Group g : c.groups()) {
                byte[] codes = g.keys().codes().clone();
                codes[0] ^= (byte) 0xFF;
                groups.add(new PackedKvCache.Group(new PackedBlock(codes, g.keys().meta()), g.keyBits(), g.values()));
            }
            return new PackedKvCache(c.kvHeads(), c.headDim(), c.sinkTokens(), c.sinkKeys(), c.sinkValues(), c.groupTokens(),
                    groups, c.valueBits(), c.valueGroupChannels(), c.residualTokens(), c.residualKeys(), c.residualValues());
        }
    }

    @Test
    void anAttentionKernelMisreadingCodesBreaksTheOracleMatchAndTheFlashRule() {
        PnMixResult r = run(Mutant.NONE, new MisreadingOps(), truth(Mutant.NONE));
        assertThat(PnMixChecks.packedMatchesOracle(r, TIGHT)).as("error %s", r.packedVsOracleMaxError()).isFalse();
        assertThat(PnMixChecks.packedMatchesOracle(run(Mutant.NONE), TIGHT)).isTrue();
        PnMixKernelChecks.AttentionCase a = PnMixKernelChecks.attentionCase(SEED, 0);
        assertThat(PnMixKernelChecks.attentionFp64(new CpuPackedCacheOps(), a).holds()).isTrue();
        assertThat(PnMixKernelChecks.attentionFp32(new CpuPackedCacheOps(), a).holds()).isTrue();
        assertThat(PnMixKernelChecks.attentionFp64(new MisreadingOps(), a).holds()).isFalse();
        assertThat(PnMixKernelChecks.attentionFp32(new MisreadingOps(), a).holds()).isFalse();
    }
}
