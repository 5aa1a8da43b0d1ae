package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.spec.Breaks;

/**
 * The pn-mix checks read an implementation through its own operations and judge its bytes only where the paper fixes
 * them: a right implementation with its own bit order ({@link OwnBitOrderOps}) passes every check that reads a cache,
 * and broken ones that its own operations would hide from a layout-blind reader are still rejected.
 */
@Tag("pn-mix")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OwnLayoutChecksTest {
    private static final long SEED = 42;
    private static final double TIGHT = 1e-12;
    private final PnMixConfig pinned = PnMixConfig.pinned();
    private final Projections truth = PnMixFixtures.syntheticTruth(pinned, SEED, PairLayout.ADJACENT);

    private PnMixResult run(PackedCacheOps ops) {
        return new PnMixProtocol(pinned, ops, true).run(truth, KeyPlan.saliency());
    }

    @Test
    void aRightImplementationWithItsOwnBitOrderPassesEveryCheckThatReadsItsCache() {
        OwnBitOrderOps own = new OwnBitOrderOps();
        PnMixResult r = run(own);
        PnMixResult twin = run(new CpuPackedCacheOps());
        assertThat(r.finalCache().groups().get(0).keys().codes()).as("its bytes are not mechspec's")
                .isNotEqualTo(twin.finalCache().groups().get(0).keys().codes());
        assertThat(r.metrics()).as("every figure of the run, bit for bit").isEqualTo(twin.metrics());
        assertThat(PnMixChecks.byteCountFaults(r.finalCache())).isEmpty();
        assertThat(PnMixChecks.quantizerLevelMismatches(r.finalCache(), own, truth.k(), truth.v())).isZero();
        assertThat(PnMixChecks.packRoundTripMismatches(r.finalCache(), own)).isZero();
        assertThat(PnMixChecks.packedMatchesOracle(r, TIGHT)).isTrue();
        assertThat(FigureChecks.figures(r, truth, own)).allMatch(FigureChecks.Figure::holds);
        assertThat(PnMixKernelChecks.quantizePackMismatchesOwnLayout(own, new CpuPackedCacheOps(), SEED)).isZero();
        for (int which = 0; which < 2; which++) {
            PnMixKernelChecks.AttentionCase a = PnMixKernelChecks.attentionCase(SEED, which, own);
            assertThat(PnMixKernelChecks.attentionFp64(own, a).holds()).isTrue();
            assertThat(PnMixKernelChecks.attentionFp32(own, a).holds()).isTrue();
        }
        PnMixKernelChecks.DecodeCase c = PnMixKernelChecks.decodeCase("d32 group2 keys97", new org.mechspec.compute.Rng(SEED),
                2, 2, 32, PnMixKernelChecks.DECODE_CHUNK + 1, PnMixKernelChecks.DECODE_CHUNK, false, false, own);
        assertThat(PnMixKernelChecks.decodeFp64(own, c.packed(), c).holds()).isTrue();
        assertThat(PnMixKernelChecks.decodeFp32(own, c.packed(), c).holds()).isTrue();
    }

    /** Its own pack and unpack agree, and its dequantize reads them, but its quantizer writes each code one level low. */
    private static final class CodesOneLevelLowOps extends OwnBitOrderOps {
        @Override
        public PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit) {
            PackedBlock b = super.quantizePerChannel(x, tokens, bits, oneBit);
            int[] codes = unpackPerChannel(b.codes(), tokens, bits);
            for (int i = 0; i < codes.length; i++) {
                codes[i] = Math.max(0, codes[i] - 1);
            }
            return new PackedBlock(packPerChannel(codes, tokens, bits), b.meta());
        }
    }

    @Test
    @Breaks(paper = "pn-mix", check = "quantizer_levels_exact")
    void codesOneLevelLowBehindAConsistentPackAndUnpackBreakTheQuantizerCheckThroughItsDequantize() {
        CodesOneLevelLowOps broken = new CodesOneLevelLowOps();
        PnMixResult r = run(broken);
        assertThat(PnMixChecks.packRoundTripMismatches(r.finalCache(), broken)).as("pack and unpack agree").isZero();
        assertThat(PnMixChecks.quantizerLevelMismatches(r.finalCache(), broken, truth.k(), truth.v())).isPositive();
    }

    /** Packs MSB-first but dequantizes as if the streams were mechspec's (LSB-first): its reader disagrees with its packer. */
    private static final class TwinOrderDequantizeOps extends OwnBitOrderOps {
        @Override
        public double[] dequantizePerChannel(PackedBlock block, int tokens, int[] bits) {
            return cpu.dequantizePerChannel(block, tokens, bits);
        }

        @Override
        public double[] dequantizePerToken(PackedBlock block, int tokens, int channels, int groupChannels, int bits) {
            return cpu.dequantizePerToken(block, tokens, channels, groupChannels, bits);
        }
    }

    @Test
    @Breaks(paper = "pn-mix", check = "quantizer_levels_exact")
    @Breaks(paper = "pn-mix", check = "pack_unpack_roundtrip")
    @Breaks(paper = "pn-mix", check = "cuda_quantize_pack_bit_equal")
    void aDequantizeThatReadsAnotherBitOrderThanItsPackBreaksLevelsRoundTripAndBitEquality() {
        TwinOrderDequantizeOps broken = new TwinOrderDequantizeOps();
        PnMixResult r = run(new OwnBitOrderOps());
        assertThat(PnMixChecks.quantizerLevelMismatches(r.finalCache(), broken, truth.k(), truth.v())).isPositive();
        assertThat(PnMixChecks.packRoundTripMismatches(r.finalCache(), broken)).isPositive();
        assertThat(PnMixKernelChecks.quantizePackMismatchesOwnLayout(broken, new CpuPackedCacheOps(), SEED)).isPositive();
    }

    /** Its attention reads its own cache as if it were in mechspec's layout (LSB-first). */
    private static final class TwinOrderAttentionOps extends OwnBitOrderOps {
        @Override
        PackedKvCache twinLayout(PackedKvCache cache) {
            return cache;
        }
    }

    @Test
    @Breaks(paper = "pn-mix", check = "packed_attention_matches_dequantized_oracle")
    @Breaks(paper = "pn-mix", check = "cuda_packed_attention_flash_rule")
    @Breaks(paper = "pn-mix", check = "cuda_split_k_decode_flash_rule")
    void anAttentionThatReadsAnotherBitOrderThanItsOwnCacheBreaksTheOracleAndTheFlashRules() {
        TwinOrderAttentionOps broken = new TwinOrderAttentionOps();
        PnMixResult r = run(broken);
        assertThat(PnMixChecks.packedMatchesOracle(r, TIGHT)).as("error %s", r.quality().packedVsOracleMaxError()).isFalse();
        PnMixKernelChecks.AttentionCase a = PnMixKernelChecks.attentionCase(SEED, 0, broken);
        assertThat(PnMixKernelChecks.attentionFp64(broken, a).holds()).isFalse();
        assertThat(PnMixKernelChecks.attentionFp32(broken, a).holds()).isFalse();
        PnMixKernelChecks.DecodeCase c = PnMixKernelChecks.decodeCase("d32 group2 keys97", new org.mechspec.compute.Rng(SEED),
                2, 2, 32, PnMixKernelChecks.DECODE_CHUNK + 1, PnMixKernelChecks.DECODE_CHUNK, false, false, broken);
        assertThat(PnMixKernelChecks.decodeFp64(broken, c.packed(), c).holds()).isFalse();
        assertThat(PnMixKernelChecks.decodeFp32(broken, c.packed(), c).holds()).isFalse();
    }

    @Test
    void aCacheOffThePapersByteCountsIsNamedInThePapersTerms() {
        PackedKvCache c = run(new OwnBitOrderOps()).finalCache();
        // Per-token metadata for twice the paper's value groups, as a quantizer of groups half as wide writes them (its
        // codes take the same bytes).
        OwnBitOrderOps halfWidth = new OwnBitOrderOps();
        List<PackedKvCache.Group> groups2 = new java.util.ArrayList<>();
        for (PackedKvCache.Group g : c.groups()) {
            PackedBlock v = halfWidth.quantizePerToken(halfWidth.dequantizePerToken(g.values(), c.groupTokens(), c.channels(),
                    c.valueGroupChannels(), c.valueBits()), c.groupTokens(), c.channels(), c.valueGroupChannels() / 2, c.valueBits(),
                    OneBitLevels.CONDITIONAL_MEANS);
            groups2.add(new PackedKvCache.Group(g.keys(), g.keyBits(), v));
        }
        PackedKvCache wrong = new PackedKvCache(c.kvHeads(), c.headDim(), c.sinkTokens(), c.sinkKeys(), c.sinkValues(), c.groupTokens(),
                groups2, c.valueBits(), c.valueGroupChannels(), c.residualTokens(), c.residualKeys(), c.residualValues());
        List<String> faults = PnMixChecks.byteCountFaults(wrong);
        assertThat(faults).isNotEmpty().allMatch(f -> f.contains(" values: "));
        int tokens = c.groupTokens();
        int groups = c.channels() / c.valueGroupChannels();
        assertThat(faults).anyMatch(f -> f.equals("group 0 values: metadata hold " + 2 * tokens * groups + " quantization groups ("
                + 8 * tokens * groups + " bytes); " + tokens + " tokens in groups of " + c.valueGroupChannels() + " channels over "
                + c.channels() + " channels make " + tokens * groups + " groups (" + 4 * tokens * groups
                + " bytes of fp16 scale and zero)"));
        assertThatThrownBy(() -> PnMixChecks.quantizerLevelMismatches(wrong, new OwnBitOrderOps(), truth.k(), truth.v()))
                .isInstanceOf(AssertionError.class).hasMessageContaining("metadata hold " + 2 * tokens * groups + " quantization groups");
    }
}
