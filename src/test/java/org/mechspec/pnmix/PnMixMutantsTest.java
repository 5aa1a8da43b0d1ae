package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.HalfFloat;
import org.mechspec.spec.Breaks;

/**
 * Each pn-mix check reports false on a deliberately broken mechanism, and true on the unbroken one over the same
 * input. Inputs are synthetic (the pinned protocol over random printable bytes), so this runs without data.
 */
@Tag("pn-mix")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PnMixMutantsTest {
    private static final long SEED = 42;
    private final PnMixConfig pinned = PnMixConfig.pinned();
    /** One run per broken mechanism, held by this class's instance, so every launch computes its own. */
    private final Map<String, PnMixResult> runs = new HashMap<>();
    private static final double TIGHT = 1e-12;

    private Projections truth() {
        return truth(PairLayout.ADJACENT);
    }

    private Projections truth(PairLayout ropeLayout) {
        return PnMixFixtures.syntheticTruth(pinned, SEED, ropeLayout);
    }

    private synchronized PnMixResult run(String name, Supplier<PnMixResult> run) {
        return runs.computeIfAbsent(name, k -> run.get());
    }

    private PnMixResult unbroken() {
        return run("unbroken", () -> run(new CpuPackedCacheOps(), truth()));
    }

    private PnMixResult run(PackedCacheOps ops, Projections truth) {
        return new PnMixProtocol(pinned, ops, true).run(truth, KeyPlan.saliency());
    }

    @Test
    void theSpecifiedMechanismPassesEveryCheck() {
        PnMixResult r = unbroken();
        Projections t = truth();
        assertThat(PnMixChecks.byteAccountingExact(r)).isTrue();
        assertThat(PnMixChecks.tokenAccountingExact(r)).isTrue();
        assertThat(PnMixChecks.sinkKeysExact(r, t.k(), 0.0)).isTrue();
        assertThat(PnMixChecks.saliencyComputedOnce(r)).isTrue();
        assertThat(PnMixChecks.maskUnchangedAfterDecode(r)).isTrue();
        assertThat(PnMixChecks.saliencyMaskMismatches(r, t)).isZero();
        assertThat(PnMixChecks.ropePairNormMaxError(t, PairLayout.ADJACENT)).isLessThanOrEqualTo(TIGHT);
        assertThat(PnMixChecks.quantizerLevelMismatches(r.finalCache(), new CpuPackedCacheOps(), t.k(), t.v())).isZero();
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
                PnMixExperiment.run(SEED, tokens, "synthetic", small, CpuBackend.INSTANCE).metrics(),
                PnMixExperiment.run(SEED, tokens, "synthetic", small, CpuBackend.INSTANCE).metrics())).isTrue();
        assertThat(PnMixKernelChecks.quantizePackMismatches(new CpuPackedCacheOps(), new CpuPackedCacheOps(), SEED)).isZero();
        PnMixKernelChecks.AttentionCase a = PnMixKernelChecks.attentionCase(SEED, 1);
        assertThat(PnMixKernelChecks.attentionFp64(new CpuPackedCacheOps(), a).holds()).isTrue();
        assertThat(PnMixKernelChecks.attentionFp32(new CpuPackedCacheOps(), a).holds()).isTrue();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "byte_accounting_exact")
    void countingAByteTwiceBreaksByteAccounting() {
        assertThat(PnMixChecks.byteAccountingExact(BrokenPnMix.maskCountedTwice(unbroken()))).isFalse();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "sink_keys_exact")
    @Breaks(paper = "pn-mix", check = "token_accounting_exact")
    void quantizingSinksBreaksSinkKeysAndTokenAccounting() {
        PnMixResult r = run("quantized sinks", () -> BrokenPnMix.quantizedSinks(pinned, truth()));
        assertThat(PnMixChecks.sinkKeysExact(r, truth().k(), 0.0)).as("sink error %s", r.quality().sinkKeyMaxError()).isFalse();
        assertThat(PnMixChecks.tokenAccountingExact(r)).isFalse();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "saliency_computed_once")
    @Breaks(paper = "pn-mix", check = "mask_unchanged_after_decode")
    void recomputingSaliencyDuringDecodeBreaksComputedOnceAndTheUnchangedMask() {
        assertThat(PnMixChecks.saliencyComputedOnce(BrokenPnMix.recomputedSaliency(unbroken(), truth()))).isFalse();
        // Decode tokens whose low pairs are 20x larger: recomputed saliency must move the mask.
        Projections t = truth();
        PairMask prefillMask = unbroken().saliency().mask();
        int d = pinned.model().headDim();
        for (int tok = pinned.tokens().prefill(); tok < pinned.totalTokens(); tok++) {
            for (int h = 0; h < pinned.model().queryHeads(); h++) {
                boost(t.q(), (tok * pinned.model().queryHeads() + h) * d, prefillMask, h / (pinned.model().queryHeads() / pinned.model().kvHeads()));
            }
            for (int h = 0; h < pinned.model().kvHeads(); h++) {
                boost(t.k(), tok * pinned.model().kvChannels() + h * d, prefillMask, h);
            }
        }
        PnMixResult boosted = run(new CpuPackedCacheOps(), t);
        assertThat(PnMixChecks.maskUnchangedAfterDecode(BrokenPnMix.recomputedSaliency(boosted, t))).isFalse();
        assertThat(PnMixChecks.maskUnchangedAfterDecode(boosted)).isTrue();
    }

    private void boost(double[] rows, int base, PairMask mask, int kvHead) {
        for (int c = 0; c < pinned.model().headDim(); c++) {
            if (!mask.high(kvHead, c / 2)) {
                rows[base + c] = HalfFloat.roundToHalf(rows[base + c] * 20);
            }
        }
    }

    @Test
    @Breaks(paper = "pn-mix", check = "rope_pair_norm_invariance")
    @Breaks(paper = "pn-mix", check = "saliency_mask_follows_pair_scores")
    void halfSplitPairsWhereAdjacentWasAskedBreakRopeNormsAndSaliency() {
        Projections t = truth(PairLayout.HALF_SPLIT);
        PnMixResult r = BrokenPnMix.halfSplitWhereAdjacent(pinned, t);
        assertThat(PnMixChecks.ropePairNormMaxError(t, PairLayout.ADJACENT)).isGreaterThan(TIGHT);
        assertThat(PnMixChecks.saliencyMaskMismatches(r, t)).isPositive();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "quantizer_levels_exact")
    void minMaxLevelsForOneBitBreakTheQuantizerCheck() {
        Projections t = truth();
        PnMixResult r = run("min-max 1-bit", () -> run(new BrokenPnMix.MinMaxOneBitOps(), t));
        assertThat(PnMixChecks.quantizerLevelMismatches(r.finalCache(), new CpuPackedCacheOps(), t.k(), t.v())).isPositive();
        assertThat(r.quality().keyMse()).as("min-max levels waste the 1-bit code").isGreaterThan(unbroken().quality().keyMse());
    }

    @Test
    @Breaks(paper = "pn-mix", check = "online_matches_final_outside_requantized_window")
    void nonCausalFinalCallBreaksOnlineVsFinal() {
        PnMixResult r = run(new BrokenPnMix.NonCausalOps(), truth());
        assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(r, TIGHT)).isFalse();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "attention_calls_counted")
    void perHeadAttentionCallsBreakTheCallCount() {
        PnMixResult r = BrokenPnMix.perHeadCalls(unbroken());
        assertThat(PnMixChecks.attentionCallsCounted(r)).as("%d calls", r.calls().attentionCalls()).isFalse();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "pair_saliency_beats_random_mask")
    @Breaks(paper = "pn-mix", check = "mixed_precision_beats_uniform_at_equal_bytes")
    @Breaks(paper = "pn-mix", check = "saliency_mask_follows_pair_scores")
    void invertedSaliencyLosesToRandomMasksAndToUniformKeys() {
        PnMixExperiment e = PlantedPairs.experiment(SEED, BrokenPnMix.INVERTED_SALIENCY);
        assertThat(PnMixChecks.saliencyBeatsRandomMasks(e)).isFalse();
        assertThat(PnMixChecks.mixedBeatsUniformAtEqualBytes(e)).isFalse();
        PnMixResult inverted = new PnMixProtocol(pinned, new CpuPackedCacheOps(), BrokenPnMix.INVERTED_SALIENCY, true).run(truth(), KeyPlan.saliency());
        assertThat(PnMixChecks.saliencyMaskMismatches(inverted, truth())).isPositive();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "same_seed_metrics_identical")
    void unseededInitializationBreaksSameSeedIdentity() {
        PnMixConfig small = PlantedPairs.config();
        byte[] tokens = PnMixFixtures.syntheticTokens(SEED, small.totalTokens());
        assertThat(PnMixChecks.metricsIdentical(
                BrokenPnMix.unseeded(SEED, tokens, small).metrics(),
                BrokenPnMix.unseeded(SEED, tokens, small).metrics())).isFalse();
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
    @Breaks(paper = "pn-mix", check = "pack_unpack_roundtrip")
    @Breaks(paper = "pn-mix", check = "cuda_quantize_pack_bit_equal")
    void aPackerDroppingTheTopBitBreaksRoundTripsAndBitEquality() {
        PackedCacheOps broken = new TopBitDroppingOps();
        assertThat(PnMixChecks.codeRoundTripMismatches(new CpuPackedCacheOps(), new int[] {3, 2, 1, 0}, 4, new int[] {2}, 1, 2)).isZero();
        assertThat(PnMixChecks.packRoundTripMismatches(unbroken().finalCache(), broken)).isPositive();
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
    @Breaks(paper = "pn-mix", check = "packed_attention_matches_dequantized_oracle")
    @Breaks(paper = "pn-mix", check = "cuda_packed_attention_flash_rule")
    void anAttentionKernelMisreadingCodesBreaksTheOracleMatchAndTheFlashRule() {
        PnMixResult r = run(new MisreadingOps(), truth());
        assertThat(PnMixChecks.packedMatchesOracle(r, TIGHT)).as("error %s", r.quality().packedVsOracleMaxError()).isFalse();
        assertThat(PnMixChecks.packedMatchesOracle(unbroken(), TIGHT)).isTrue();
        PnMixKernelChecks.AttentionCase a = PnMixKernelChecks.attentionCase(SEED, 0);
        assertThat(PnMixKernelChecks.attentionFp64(new CpuPackedCacheOps(), a).holds()).isTrue();
        assertThat(PnMixKernelChecks.attentionFp32(new CpuPackedCacheOps(), a).holds()).isTrue();
        assertThat(PnMixKernelChecks.attentionFp64(new MisreadingOps(), a).holds()).isFalse();
        assertThat(PnMixKernelChecks.attentionFp32(new MisreadingOps(), a).holds()).isFalse();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "cuda_split_k_decode_flash_rule")
    void aSplitKDecodeThatMergesChunksWrongDropsBoundaryKeysOrLeavesAnElementUnwrittenBreaksTheFlashRule() {
        PnMixKernelChecks.DecodeCase c = PnMixKernelChecks.decodeCase("d64 group5 keys328", new org.mechspec.compute.Rng(SEED),
                2, 5, 64, 3 * PnMixKernelChecks.DECODE_CHUNK + 40, PnMixKernelChecks.DECODE_CHUNK, false, false);
        for (PackedKvCache cache : List.of(c.packed(), c.fp16())) {
            SplitKDecodeOps unbroken = new SplitKDecodeOps(PnMixKernelChecks.DECODE_CHUNK, SplitKDecodeOps.Fault.NONE);
            assertThat(PnMixKernelChecks.decodeFp64(unbroken, cache, c).holds()).isTrue();
            assertThat(PnMixKernelChecks.decodeFp32(unbroken, cache, c).holds()).isTrue();
            for (SplitKDecodeOps.Fault f : SplitKDecodeOps.Fault.values()) {
                if (f == SplitKDecodeOps.Fault.NONE) {
                    continue;
                }
                SplitKDecodeOps broken = new SplitKDecodeOps(PnMixKernelChecks.DECODE_CHUNK, f);
                assertThat(PnMixKernelChecks.decodeFp64(broken, cache, c).holds()).as("%s fp64", f).isFalse();
                assertThat(PnMixKernelChecks.decodeFp32(broken, cache, c).holds()).as("%s fp32", f).isFalse();
            }
        }
    }

    /**
     * Right but different: attention written plainly (online softmax one key at a time, fp64 and float arithmetic)
     * passes both packed-attention property halves in every regime; their bound does not condemn another rounding order.
     */
    @Test
    void plainOnlineSoftmaxPassesBothPackedAttentionPropertyHalves() {
        PackedCacheOps plain = new PlainPackedAttentionOps(PlainPackedAttentionOps.Fault.NONE);
        PnMixContracts.packedAttentionWithinBoundOverRegimes(plain, 40, PackedAttentionRegimes.BUDGET);
        PnMixContracts.fp32PackedAttentionWithinBoundOverRegimes(plain, 30, PackedAttentionRegimes.BUDGET);
    }

    /**
     * A softmax without the max shift is right on the pinned cache (ordinary logits); the regimes' dominant sink keys,
     * large and shifted logits overflow its exp.
     */
    @Test
    @Breaks(paper = "pn-mix", check = "packed_attention_matches_dequantized_oracle")
    @Breaks(paper = "pn-mix", check = "cuda_packed_attention_flash_rule")
    void packedAttentionWithoutTheMaxShiftFailsBothPropertyHalves() {
        rejectedOnlyByTheRegimes(PlainPackedAttentionOps.Fault.NO_MAX_SHIFT, true);
    }

    /** q·k over at most 64 channels: the pinned head dim (32) and the old property's (≤ 32) never showed it. */
    @Test
    @Breaks(paper = "pn-mix", check = "packed_attention_matches_dequantized_oracle")
    @Breaks(paper = "pn-mix", check = "cuda_packed_attention_flash_rule")
    void packedAttentionCappedAt64ChannelsFailsBothPropertyHalves() {
        rejectedOnlyByTheRegimes(PlainPackedAttentionOps.Fault.HEAD_DIM_CAPPED_AT_64, true);
    }

    /** Query head h reading KV head h / 2: right at a GQA ratio of 2 (the old property's only ratio), wrong at 1 and 3–8. */
    @Test
    @Breaks(paper = "pn-mix", check = "packed_attention_matches_dequantized_oracle")
    @Breaks(paper = "pn-mix", check = "cuda_packed_attention_flash_rule")
    void packedAttentionForOneGqaRatioFailsBothPropertyHalves() {
        rejectedOnlyByTheRegimes(PlainPackedAttentionOps.Fault.GQA_RATIO_TWO, false);
    }

    private static void rejectedOnlyByTheRegimes(PlainPackedAttentionOps.Fault fault, boolean pinnedPasses) {
        PackedCacheOps broken = new PlainPackedAttentionOps(fault);
        PnMixKernelChecks.AttentionCase pinned = PnMixKernelChecks.attentionCase(SEED, 0);
        assertThat(PnMixKernelChecks.attentionFp64(broken, pinned).holds()).as("%s on the pinned cache", fault).isEqualTo(pinnedPasses);
        assertThatThrownBy(() -> PnMixContracts.packedAttentionWithinBoundOverRegimes(broken, 40, PackedAttentionRegimes.BUDGET)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("packed_vs_oracle_max_error");
        assertThatThrownBy(() -> PnMixContracts.fp32PackedAttentionWithinBoundOverRegimes(broken, 30, PackedAttentionRegimes.BUDGET)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("packed_attention_fp32_max_error");
    }
}
