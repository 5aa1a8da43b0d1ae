package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;
import org.mechspec.spec.Breaks;
import org.mechspec.spec.Records;

/**
 * PnMixChecks' predicates and counts on small runs and hand-built inputs: exact mismatch counts for caches, masks
 * and ops broken in a known number of places, thresholds met exactly (pass) and missed by one ulp (fail).
 */
@Tag("pn-mix")
class PnMixChecksTest {
    private static final long SEED = 7;
    /** 2 query heads, 1 KV head, d = 8, sink 2, groups of 4, 10 prefill + 4 decode: residual start 14, 3 groups. */
    private final PnMixConfig c = PnMixFixtures.small(2, 1, 8, 2, 4, 10, 4, 3, 1, 2);
    private final Projections truth = PnMixFixtures.syntheticTruth(c, SEED, c.model().layout());
    private final PnMixResult r = run(c, truth);

    private static PnMixResult run(PnMixConfig c, Projections truth) {
        return new PnMixProtocol(c, new CpuPackedCacheOps(), true).run(truth, KeyPlan.saliency());
    }

    private static PackedKvCache withGroups(PackedKvCache k, List<PackedKvCache.Group> groups) {
        return new PackedKvCache(k.kvHeads(), k.headDim(), k.sinkTokens(), k.sinkKeys(), k.sinkValues(), k.groupTokens(), groups,
                k.valueBits(), k.valueGroupChannels(), k.residualTokens(), k.residualKeys(), k.residualValues());
    }

    // ---- sink ------------------------------------------------------------------------------------------------

    @Test
    @Breaks(paper = "pn-mix", check = "sink_keys_exact")
    void aCacheKeepingFewerSinkTokensThanTheConfigHasAnInfiniteSinkError() {
        assertThat(PnMixChecks.sinkKeyMaxErrorFromBytes(r, truth.k())).isZero();
        PackedKvCache k = r.finalCache();
        PackedKvCache noSink = new PackedKvCache(k.kvHeads(), k.headDim(), 0, new byte[0], new byte[0], k.groupTokens(), k.groups(),
                k.valueBits(), k.valueGroupChannels(), k.residualTokens(), k.residualKeys(), k.residualValues());
        PnMixResult broken = Records.with(r, "finalCache", noSink);
        assertThat(PnMixChecks.sinkKeyMaxErrorFromBytes(broken, truth.k())).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(PnMixChecks.sinkKeysExact(broken, truth.k(), 1e300)).isFalse();
    }

    // ---- saliency mask ---------------------------------------------------------------------------------------

    @Test
    @Breaks(paper = "pn-mix", check = "saliency_mask_follows_pair_scores")
    void oneFlippedPairCountsOnceInTheMaskAndOncePerChannelAndGroupInTheKeyWidths() {
        assertThat(PnMixChecks.saliencyMaskMismatches(r, truth)).isZero();
        assertThat(r.finalCache().groups()).hasSize(3);
        boolean[] high = new boolean[c.model().kvHeads() * c.model().pairs()];
        for (int p = 0; p < c.model().pairs(); p++) {
            high[p] = r.saliency().mask().high(0, p);
        }
        int flip = r.saliency().mask().high(0, 0) ? 0 : 1;
        high[flip] = !high[flip];
        PnMixResult broken = Records.with(r, "mask", PairMask.of(c.model().kvHeads(), c.model().pairs(), high));
        // The mask: 1 pair. The key widths of the 3 groups now disagree with the stored mask on that pair's 2 channels.
        assertThat(PnMixChecks.saliencyMaskMismatches(broken, truth)).isEqualTo(1 + 3 * 2);
    }

    @Test
    void aHalfSplitRunMatchesTheSpecificationsSaliency() {
        // Pair p = channels (p, p + d/2): the spec's pairing and the key-width check's channel → pair map in that layout.
        PnMixConfig hs = c.withLayout(PairLayout.HALF_SPLIT);
        Projections t = PnMixFixtures.syntheticTruth(hs, SEED, PairLayout.HALF_SPLIT);
        PnMixResult h = run(hs, t);
        assertThat(PnMixChecks.saliencyMaskMismatches(h, t)).isZero();
        // The spec's mask equals the run's: same flags for every pair.
        PairMask spec = PnMixChecks.specSaliency(t, hs);
        for (int p = 0; p < hs.model().pairs(); p++) {
            assertThat(spec.high(0, p)).as("pair %d", p).isEqualTo(h.saliency().mask().high(0, p));
        }
    }

    @Test
    void halfSplitSaliencyPairsChannelPWithChannelPPlusHalf() {
        // One token after the sink, d = 4, one head, k = q = (0, 3, 0, 4). Half split pairs (0, 2), (1, 3): norms 0
        // and 5, so pair 1 is high; adjacent pairs (0, 1), (2, 3) would have norms 3 and 4.
        PnMixConfig hs = new PnMixConfig(new PnMixConfig.Model(256, 16, 1, 1, 4, 10000.0, PairLayout.HALF_SPLIT),
                new PnMixConfig.CachePolicy(1, 1, 1, 0.5, 3, 1, 2, 128, org.mechspec.compute.OneBitLevels.CONDITIONAL_MEANS), new PnMixConfig.Tokens(2, 0));
        double[] x = {9, 9, 9, 9, 0, 3, 0, 4};
        Projections t = new Projections(2, 1, 1, 4, x, x, x, x, x, x, x);
        PairMask m = PnMixChecks.specSaliency(t, hs);
        assertThat(m.high(0, 1)).isTrue();
        assertThat(m.high(0, 0)).isFalse();
        // (0, 4, 0, 3): half split pair 1 = (4, 3) still high; adjacent pair 0 = (0, 4) norm 4 beats (0, 3).
        double[] y = {9, 9, 9, 9, 0, 4, 0, 3};
        Projections u = new Projections(2, 1, 1, 4, y, y, y, y, y, y, y);
        assertThat(PnMixChecks.specSaliency(u, hs).high(0, 1)).isTrue();
        assertThat(PnMixChecks.specSaliency(u, hs.withLayout(PairLayout.ADJACENT)).high(0, 0)).isTrue();
    }

    // ---- RoPE pair norms -------------------------------------------------------------------------------------

    @Test
    void pairNormErrorsOfQueriesAndKeysAreBothSeen() {
        // One token, one head each, d = 2. (3, 4) → (0, 5) and (1, 0) → (0, 1) keep their norms.
        double[] q = {3, 4};
        double[] k = {1, 0};
        Projections ok = new Projections(1, 1, 1, 2, q, k, new double[] {0, 5}, new double[] {0, 1}, q, k, k);
        assertThat(PnMixChecks.ropePairNormMaxError(ok, PairLayout.ADJACENT)).isZero();
        // Query rotated to (6, 8): norm 10, error exactly 5. Key rotated to (0, 3): error exactly 2.
        Projections badQ = new Projections(1, 1, 1, 2, q, k, new double[] {6, 8}, new double[] {0, 1}, q, k, k);
        Projections badK = new Projections(1, 1, 1, 2, q, k, new double[] {0, 5}, new double[] {0, 3}, q, k, k);
        assertThat(PnMixChecks.ropePairNormMaxError(badQ, PairLayout.ADJACENT)).isEqualTo(5.0);
        assertThat(PnMixChecks.ropePairNormMaxError(badK, PairLayout.ADJACENT)).isEqualTo(2.0);
    }

    // ---- quantizer levels --------------------------------------------------------------------------------------

    @Test
    @Breaks(paper = "pn-mix", check = "quantizer_levels_exact")
    void oneValueGroupWithAWrongScaleIsCountedOnce() {
        PackedKvCache k = r.finalCache();
        assertThat(PnMixChecks.quantizerLevelMismatches(k, new CpuPackedCacheOps(), truth.k(), truth.v())).isZero();
        List<PackedKvCache.Group> groups = new ArrayList<>(k.groups());
        PackedKvCache.Group g = groups.get(1);
        byte[] meta = g.values().meta().clone();
        // Token-group 2 of group 1: its scale one fp16 step up.
        BitPacking.putHalf(meta, 4 * 2, (short) (BitPacking.getHalf(meta, 4 * 2) + 1));
        groups.set(1, new PackedKvCache.Group(g.keys(), g.keyBits(), new PackedBlock(g.values().codes(), meta)));
        assertThat(PnMixChecks.quantizerLevelMismatches(withGroups(k, groups), new CpuPackedCacheOps(), truth.k(), truth.v())).isEqualTo(1);
    }

    /** The values a dequantize reads back for {@code codes} of group 0 of {@code b}: zero + code·scale. */
    private static double[] levels(PackedBlock b, int... codes) {
        return Arrays.stream(codes).mapToDouble(c -> b.zero(0) + c * b.scale(0)).toArray();
    }

    private static PackedBlock block(double scale, double zero) {
        byte[] meta = new byte[4];
        BitPacking.putHalf(meta, 0, HalfFloat.toHalfBits(scale));
        BitPacking.putHalf(meta, 2, HalfFloat.toHalfBits(zero));
        return new PackedBlock(new byte[1], meta);
    }

    @Test
    void aGroupNeedsTheSpecsScaleZeroAndEveryCode() {
        // 2 bits over {0, 3}: scale (3 − 0)/3 = 1, zero 0, codes 0 and 3.
        double[] x = {0, 3};
        assertThat(PnMixChecks.groupMatchesSpec(x, 2, block(1, 0), 0, levels(block(1, 0), 0, 3))).isTrue();
        assertThat(PnMixChecks.groupMatchesSpec(x, 2, block(1, 0.5), 0, levels(block(1, 0.5), 0, 3))).as("wrong zero").isFalse();
        assertThat(PnMixChecks.groupMatchesSpec(x, 2, block(2, 0), 0, levels(block(2, 0), 0, 3))).as("wrong scale").isFalse();
        assertThat(PnMixChecks.groupMatchesSpec(x, 2, block(1, 0), 0, levels(block(1, 0), 0, 2))).as("wrong code").isFalse();
    }

    @Test
    void aOneBitValueEqualToTheMeanIsHigh() {
        // {0, 1, 2}: mean 1; low level mean{0} = 0, high level mean{1, 2} = 1.5; code = x ≥ mean → 0, 1, 1.
        double[] x = {0, 1, 2};
        assertThat(PnMixChecks.groupMatchesSpec(x, 1, block(1.5, 0), 0, levels(block(1.5, 0), 0, 1, 1))).isTrue();
        assertThat(PnMixChecks.groupMatchesSpec(x, 1, block(1.5, 0), 0, levels(block(1.5, 0), 0, 0, 1))).isFalse();
    }

    @Test
    void codesAreClampedToTheLargestLevel() {
        // 2 bits over {0, 4.2·2^-24}: scale 1.4·2^-24 rounds to the fp16 subnormal 2^-24, so rint(x/scale) = 4 for the
        // top value, clamped to the largest 2-bit code 3.
        double top = 4.2 * 0x1.0p-24;
        assertThat(HalfFloat.fromHalfBits(HalfFloat.toHalfBits(top / 3))).isEqualTo(0x1.0p-24);
        assertThat(PnMixChecks.groupMatchesSpec(new double[] {0, top}, 2, block(0x1.0p-24, 0), 0, levels(block(0x1.0p-24, 0), 0, 3))).isTrue();
    }

    // ---- pack round trips --------------------------------------------------------------------------------------

    /** Unpacks per channel with the first code's low bit flipped: one wrong code, one wrong byte after repacking. */
    private static final class FirstKeyCodeFlipped extends DelegatingOps {
        @Override
        public int[] unpackPerChannel(byte[] packed, int tokens, int[] bits) {
            int[] codes = cpu.unpackPerChannel(packed, tokens, bits);
            codes[0] ^= 1;
            return codes;
        }
    }

    /** Packs per token with the first byte's low bit flipped. */
    private static final class FirstValueByteFlipped extends DelegatingOps {
        @Override
        public byte[] packPerToken(int[] codes, int tokens, int channels, int groupChannels, int bits) {
            byte[] b = cpu.packPerToken(codes, tokens, channels, groupChannels, bits);
            b[0] ^= 1;
            return b;
        }
    }

    /** Unpacks per token keeping only each code's low bit. */
    private static final class TokenCodesLowBitOnly extends DelegatingOps {
        @Override
        public int[] unpackPerToken(byte[] packed, int tokens, int channels, int groupChannels, int bits) {
            return Arrays.stream(cpu.unpackPerToken(packed, tokens, channels, groupChannels, bits)).map(x -> x & 1).toArray();
        }
    }

    @Test
    @Breaks(paper = "pn-mix", check = "pack_unpack_roundtrip")
    void packRoundTripCountsEveryWrongByteAndCode() {
        PackedKvCache k = r.finalCache();
        assertThat(PnMixChecks.packRoundTripMismatches(k, new CpuPackedCacheOps())).isZero();
        // Per group (3): one repacked key byte and one key code.
        assertThat(PnMixChecks.packRoundTripMismatches(k, new FirstKeyCodeFlipped())).isEqualTo(3 * 2);
        // Per group: one repacked value byte.
        assertThat(PnMixChecks.packRoundTripMismatches(k, new FirstValueByteFlipped())).isEqualTo(3);
    }

    @Test
    @Breaks(paper = "pn-mix", check = "pack_unpack_roundtrip")
    void codeRoundTripCountsTokenCodesThatLoseTheirHighBit() {
        int[] codes = {3, 2, 1, 0};
        assertThat(PnMixChecks.codeRoundTripMismatches(new CpuPackedCacheOps(), codes, 4, new int[] {2}, 1, 2)).isZero();
        // Per token 3, 2, 1, 0 come back 1, 0, 1, 0: two wrong.
        assertThat(PnMixChecks.codeRoundTripMismatches(new TokenCodesLowBitOnly(), codes, 4, new int[] {2}, 1, 2)).isEqualTo(2);
    }

    @Test
    void differingBytesOfUnequalLengthsIsTheLongerLength() {
        assertThat(PnMixChecks.differingBytes(new byte[2], new byte[5])).isEqualTo(5);
        assertThat(PnMixChecks.differingBytes(new byte[5], new byte[2])).isEqualTo(5);
        assertThat(PnMixChecks.differingBytes(new byte[] {1, 2, 3}, new byte[] {1, 7, 3})).isEqualTo(1);
    }

    // ---- thresholds ----------------------------------------------------------------------------------------------

    @Test
    void packedVsOracleAtTheThresholdPasses() {
        double t = 1e-12;
        assertThat(PnMixChecks.packedMatchesOracle(Records.with(r, "packedVsOracleMaxError", t), t)).isTrue();
        assertThat(PnMixChecks.packedMatchesOracle(Records.with(r, "packedVsOracleMaxError", Math.nextUp(t)), t)).isFalse();
    }

    private PnMixResult window(PnMixResult base, int unchanged, int changed, double unchangedDelta, double changedDelta) {
        return Records.with(Records.with(Records.with(Records.with(base, "unchangedWindowQueries", unchanged),
                "changedWindowQueries", changed), "unchangedWindowMaxDelta", unchangedDelta), "changedWindowMaxDelta", changedDelta);
    }

    @Test
    void onlineVsFinalThresholds() {
        // Final residual start 14; queries 10, 11, 12 saw residual start 10 < t + 1 (changed), query 13 sees 14 (unchanged).
        assertThat(ConfigCounts.unchangedWindowQueries(c)).isEqualTo(1);
        double t = 1e-9;
        assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(window(r, 1, 3, t, 2 * t), t)).isTrue();
        assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(window(r, 1, 3, Math.nextUp(t), 2 * t), t)).isFalse();
        // A changed window that moved by exactly the threshold did not move by more.
        assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(window(r, 1, 3, t, t), t)).isFalse();
        assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(window(r, 1, 3, t, Math.nextUp(t)), t)).isTrue();
    }

    @Test
    void withoutDecodeTokensThereIsNoChangedWindowToMove() {
        PnMixConfig none = PnMixFixtures.small(2, 1, 8, 2, 4, 10, 0, 3, 1, 2);
        PnMixResult base = Records.with(r, "config", none);
        assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(window(base, 0, 0, 0.0, 0.0), 0.0)).isTrue();
    }

    private PnMixResult kl(double x) {
        return Records.with(r, "attentionKl", x);
    }

    @Test
    void saliencyMustBeStrictlyBelowTheRandomMean() {
        // Random mean (0.25 + 0.75)/2 = 0.5 exactly.
        PnMixResult[] random = {kl(0.25), kl(0.75)};
        assertThat(PnMixChecks.saliencyBeatsRandomMasks(new PnMixExperiment(SEED, "x", truth, kl(0.5), random, r))).isFalse();
        assertThat(PnMixChecks.saliencyBeatsRandomMasks(new PnMixExperiment(SEED, "x", truth, kl(Math.nextDown(0.5)), random, r)))
                .isTrue();
    }

    @Test
    void mixedMustBeStrictlyBelowUniformAndEveryWidthIsChecked() {
        // Groups of 8: 3/1-bit keys take 3 + 1 bytes per channel pair, uniform 2-bit 2 + 2: equal budgets.
        PnMixConfig eq = PnMixFixtures.small(2, 1, 8, 2, 8, 18, 6, 3, 1, 2);
        Projections t = PnMixFixtures.syntheticTruth(eq, SEED, eq.model().layout());
        PnMixExperiment e = PnMixExperiment.over(SEED, t, new Rng(SEED), "x", eq, CpuBackend.INSTANCE);
        double main = e.main().quality().attentionKl();
        PnMixExperiment above = Records.with(e, "uniform", Records.with(e.uniform(), "attentionKl", Math.nextUp(main)));
        PnMixExperiment equal = Records.with(e, "uniform", Records.with(e.uniform(), "attentionKl", main));
        assertThat(PnMixChecks.mixedBeatsUniformAtEqualBytes(above)).isTrue();
        assertThat(PnMixChecks.mixedBeatsUniformAtEqualBytes(equal)).isFalse();

        PnMixResult u = e.uniform();
        assertThat(PnMixChecks.everyKeyChannelHas(u, 2)).isTrue();
        int[] start = u.saliency().keyBitsAtStart().clone();
        start[5] = 1;
        assertThat(PnMixChecks.everyKeyChannelHas(Records.with(u, "keyBitsAtStart", start), 2)).as("one start width").isFalse();
        // The mixed run with its start widths claimed all 3 bits: its groups still hold 1-bit channels.
        int[] three = new int[e.main().saliency().keyBitsAtStart().length];
        Arrays.fill(three, 3);
        assertThat(e.main().finalCache().groups()).hasSize(2);
        assertThat(PnMixChecks.everyKeyChannelHas(Records.with(e.main(), "keyBitsAtStart", three), 3)).as("group widths").isFalse();
    }

    // ---- metrics ------------------------------------------------------------------------------------------------

    private static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    @Test
    void metricsMustAgreeOnNamesAndBits() {
        assertThat(PnMixChecks.metricsIdentical(map("a", 1.0, "n", 3L), map("a", 1.0, "n", 3L))).isTrue();
        assertThat(PnMixChecks.metricsIdentical(map("a", 1.0), map("a", 1.0, "b", 2.0))).as("extra name").isFalse();
        assertThat(PnMixChecks.metricsIdentical(map("a", 1.0), map("a", 2.0))).as("other double").isFalse();
        assertThat(PnMixChecks.metricsIdentical(map("n", 3L), map("n", 4L))).as("other long").isFalse();
        // Two NaNs with different payloads: Double.equals calls them equal, the raw bits do not.
        Double nan1 = Double.longBitsToDouble(0x7ff8000000000000L);
        Double nan2 = Double.longBitsToDouble(0x7ff8000000000001L);
        assertThat(Double.doubleToRawLongBits(nan2)).isEqualTo(0x7ff8000000000001L);
        assertThat(nan1.equals(nan2)).isTrue();
        assertThat(PnMixChecks.metricsIdentical(map("a", nan1), map("a", nan2))).as("NaN payloads").isFalse();
    }
}
