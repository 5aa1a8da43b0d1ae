package org.mechspec.pnmix;

import org.mechspec.compute.FloatArrays;
import static org.assertj.core.api.Assertions.assertThat;
import static org.mechspec.spec.Properties.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;
import static org.quicktheories.generators.SourceDSL.longs;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.Backend;
import org.mechspec.compute.BitPacking;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.compute.Rng;
import org.mechspec.spec.AttentionRegimes;
import org.mechspec.spec.Contract;
import org.mechspec.spec.FlashRule;
import org.mechspec.spec.PropertyRun;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;
import org.mechspec.spec.Stress;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * pn-mix's contracts: every metric and boolean of seed file 002 as a check over the pinned protocol (seeded
 * halves, one per backend and seed) plus the contracts protocols.md (pn-mix) adds; property halves over generated lengths
 * (around the sink and group boundaries), head counts and bit widths.
 */
@Tag("pn-mix")
class PnMixContracts {
    private static final String PAPER = "pn-mix";

    /** Sequence lengths around the pinned sink (32) and group (128) boundaries, and anything up to 450. */
    private static Gen<Integer> lengths() {
        return Generate.oneOf(Generate.pick(List.of(1, 31, 32, 33, 127, 128, 129, 159, 160, 161, 288, 416, 417, 448)),
                integers().between(1, 450));
    }

    /** (kvHeads, headDim): head counts 1..3, head dims 2..32. */
    private static Gen<int[]> kvShapes() {
        return integers().between(1, 3).zip(Generate.pick(List.of(2, 4, 8, 16, 32)), (h, d) -> new int[] {h, d});
    }

    /** (high, low, value) bit widths, each 1..8. */
    private static Gen<int[]> widths() {
        return integers().between(1, 8).zip(integers().between(1, 8), integers().between(1, 8), (a, b, c) -> new int[] {a, b, c});
    }

    // ---- byte and token accounting -------------------------------------------------------------------

    @Contract(paper = PAPER, check = "byte_accounting_exact")
    @Seeded
    void byteAccounting(SeedRun run) {
        PnMixResult r = PnMixFixtures.experiment(run).main();
        run.metric("key_bytes", r.storage().keyBytes()).metric("value_bytes", r.storage().valueBytes())
                .metric("persistent_cache_bytes", r.persistentCacheBytes())
                .metric("key_bits_per_element_including_sink_residual", r.keyBitsPerElement())
                .metric("temporary_dequantized_cache_included", r.temporaryDequantizedCacheIncluded());
        assertThat(PnMixChecks.byteAccountingExact(r)).as("bytes of the real buffers = budget from the config: %s", r).isTrue();
        JsonNode seed = PnMixFixtures.seedRunMetrics();
        assertThat(r.storage().keyBytes()).as("key bytes").isEqualTo(seed.get("key_bytes").asLong());
        assertThat(r.storage().valueBytes()).as("value bytes").isEqualTo(seed.get("value_bytes").asLong());
        assertThat(r.persistentCacheBytes()).as("persistent bytes").isEqualTo(seed.get("persistent_cache_bytes").asLong());
        assertThat(r.keyBitsPerElement()).as("key bits per element")
                .isEqualTo(seed.get("key_bits_per_element_including_sink_residual").asDouble());
    }

    @Contract(paper = PAPER, check = "byte_accounting_exact")
    @Test
    void bytesOfRealBuffersEqualTheBudgetOverLengthsHeadsAndWidths(PropertyRun run) {
        PackedCacheOps ops = PackedCacheOps.forBackend(run.backend());
        qt().withExamples(Stress.examples(40)).forAll(lengths(), kvShapes(), widths(), longs().all()).checkAssert((n, shape, bits, seed) -> {
            PnMixConfig c = PnMixFixtures.small(shape[0], shape[0], shape[1], 32, 128, 33, 0, bits[0], bits[1], bits[2]);
            PairMask mask = PnMixFixtures.randomMask(c, seed);
            int[] keyBits = mask.channelBits(c.model().headDim(), c.model().layout(), c.cache().highBits(), c.cache().lowBits());
            StreamingCache cache = PnMixFixtures.filledCache(c, ops, keyBits, mask.bytes(), n, seed, null);
            ByteBudget b = ByteBudget.of(c, n, keyBits, mask.byteLength());
            assertThat(cache.keyBytes()).as("key bytes").isEqualTo(b.keyBytes());
            assertThat(cache.valueBytes()).as("value bytes").isEqualTo(b.valueBytes());
            assertThat(cache.keyBytes() + cache.valueBytes()).as("every byte counted once").isEqualTo(cache.heldBytes());
        });
    }

    @Contract(paper = PAPER, check = "packed_attention_working_set_bounded")
    @Seeded
    void packedAttentionWorkingSetBounded(SeedRun run) {
        PackedCacheOps ops = PackedCacheOps.forBackend(run.backend());
        WorkingSetCheck.Verdict v = WorkingSetCheck.judge(ops, TransientMemory.of(run.backend()), WorkingSetCheck.cacheFor(run.seed(), ops));
        run.metric("packed_decode_f64_peak_bytes", v.decode64().peakBytes()).metric("packed_decode_f64_bound_bytes", v.decode64().boundBytes())
                .metric("packed_decode_f32_peak_bytes", v.decode32().peakBytes()).metric("packed_decode_f32_bound_bytes", v.decode32().boundBytes())
                .metric("packed_attend_f64_peak_bytes", v.attend64().peakBytes()).metric("packed_attend_f64_bound_bytes", v.attend64().boundBytes())
                .metric("packed_attention_whole_cache_dequantized_bytes", v.decode64().wholeCacheBytes());
        WorkingSetCheck.Measured worst = v.worst();
        assertThat(v.held()).as("%s = %d > %d (over a %d-token packed cache; a dequantized copy of the whole cache: %d bytes); %s",
                worst.metric(), worst.peakBytes(), worst.boundBytes(), WorkingSetCheck.LENGTH, worst.wholeCacheBytes(), v).isTrue();
    }

    @Contract(paper = PAPER, check = "token_accounting_exact")
    @Seeded
    void tokenAccounting(SeedRun run) {
        PnMixResult r = PnMixFixtures.experiment(run).main();
        run.metric("quantized_tokens", (long) r.storage().quantizedTokens()).metric("sink_tokens", (long) r.storage().sinkTokens())
                .metric("residual_tokens", (long) r.storage().residualTokens());
        assertThat(PnMixChecks.tokenAccountingExact(r)).as("token split: %s", r).isTrue();
        JsonNode seed = PnMixFixtures.seedRunMetrics();
        assertThat(new long[] {r.storage().quantizedTokens(), r.storage().sinkTokens(), r.storage().residualTokens()}).containsExactly(
                seed.get("quantized_tokens").asLong(), seed.get("sink_tokens").asLong(), seed.get("residual_tokens").asLong());
    }

    @Contract(paper = PAPER, check = "token_accounting_exact")
    @Test
    void tokenSplitFollowsSinkAndGroupBoundaries(PropertyRun run) {
        PackedCacheOps ops = PackedCacheOps.forBackend(run.backend());
        qt().withExamples(Stress.examples(40)).forAll(lengths(), integers().between(0, 40), Generate.pick(List.of(1, 2, 8, 32, 128)), longs().all())
                .checkAssert((n, sink, group, seed) -> {
                    PnMixConfig c = PnMixFixtures.small(2, 1, 4, sink, group, sink + 1, 0, 3, 1, 2);
                    PairMask mask = PnMixFixtures.randomMask(c, seed);
                    StreamingCache cache = PnMixFixtures.filledCache(c, ops, mask.channelBits(4, c.model().layout(), 3, 1), mask.bytes(), n, seed, null);
                    ByteBudget b = ByteBudget.of(c, n, cache.keyBits(), 0);
                    assertThat(new int[] {cache.sinkTokens(), cache.quantizedTokens(), cache.residualTokens()})
                            .containsExactly(b.sinkTokens(), b.quantizedTokens(), b.residualTokens());
                    assertThat(cache.residualTokens()).isLessThan(group);
                    assertThat(cache.length()).isEqualTo(n);
                });
    }

    // ---- sink ------------------------------------------------------------------------------------------

    @Contract(paper = PAPER, check = "sink_keys_exact")
    @Seeded
    void sinkKeysExact(SeedRun run) {
        PnMixExperiment e = PnMixFixtures.experiment(run);
        PnMixResult r = e.main();
        run.metric("sink_key_max_error", r.quality().sinkKeyMaxError());
        assertThat(PnMixChecks.sinkKeysExact(r, e.truth().k(), run.threshold())).as("sink key error %s reported, %s from the bytes",
                r.quality().sinkKeyMaxError(), PnMixChecks.sinkKeyMaxErrorFromBytes(r, e.truth().k())).isTrue();
    }

    @Contract(paper = PAPER, check = "sink_keys_exact")
    @Test
    void sinkTokensReadBackBitForBit(PropertyRun run) {
        PackedCacheOps ops = PackedCacheOps.forBackend(run.backend());
        qt().withExamples(Stress.examples(30)).forAll(lengths(), integers().between(0, 40), kvShapes(), longs().all()).checkAssert((n, sink, shape, seed) -> {
            PnMixConfig c = PnMixFixtures.small(shape[0], shape[0], shape[1], sink, 8, sink + 1, 0, 3, 1, 2);
            double[][] truth = new double[2][];
            StreamingCache cache = PnMixFixtures.filledCache(c, ops, PnMixFixtures.randomMask(c, seed)
                    .channelBits(c.model().headDim(), c.model().layout(), 3, 1), new byte[4], n, seed, truth);
            PackedKvCache view = cache.view();
            // The sink's fp16 bytes, whose layout the paper fixes, decoded here apart from the operations that filled the cache.
            double[] keys = halfs(view.sinkKeys());
            double[] values = halfs(view.sinkValues());
            int s = Math.min(n, sink) * c.model().kvChannels();
            assertThat(keys.length).as("sink keys held").isGreaterThanOrEqualTo(s);
            assertThat(Arrays.copyOf(keys, s)).containsExactly(Arrays.copyOf(truth[0], s));
            assertThat(Arrays.copyOf(values, s)).containsExactly(Arrays.copyOf(truth[1], s));
        });
    }

    private static double[] halfs(byte[] bytes) {
        double[] out = new double[bytes.length / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = HalfFloat.fromHalfBits(BitPacking.getHalf(bytes, 2 * i));
        }
        return out;
    }

    // ---- saliency and mask -----------------------------------------------------------------------------

    /** Small protocol configurations: head counts, head dims, sink, group, prefill and decode lengths. */
    static Gen<PnMixConfig> smallProtocols() {
        Gen<int[]> heads = Generate.pick(List.of(new int[] {2, 1}, new int[] {4, 2}, new int[] {2, 2}, new int[] {6, 3}));
        Gen<int[]> lengths = integers().between(0, 4).zip(Generate.pick(List.of(2, 4, 8)), integers().between(1, 30),
                integers().between(0, 24), (s, g, p, d) -> new int[] {s, g, s + p, d});
        return heads.zip(Generate.pick(List.of(4, 8)), lengths,
                (h, d, l) -> PnMixFixtures.small(h[0], h[1], d, l[0], l[1], l[2], l[3], 3, 1, 2));
    }

    /** The protocol over a small configuration, on the run's backend (the worker's operations where one is judged). */
    private static PnMixResult smallRun(PnMixConfig c, long seed, Backend backend) {
        Projections truth = PnMixFixtures.syntheticTruth(c, seed, c.model().layout());
        return new PnMixProtocol(c, PackedCacheOps.forBackend(backend), true).run(truth, KeyPlan.saliency());
    }

    @Contract(paper = PAPER, check = "saliency_computed_once")
    @Seeded
    void saliencyComputedOnce(SeedRun run) {
        PnMixResult r = PnMixFixtures.experiment(run).main();
        run.metric("saliency_computations", (long) r.saliency().saliencyComputations());
        assertThat(PnMixChecks.saliencyComputedOnce(r)).as("saliency computations %s", r.saliency().saliencyComputations()).isTrue();
    }

    @Contract(paper = PAPER, check = "saliency_computed_once")
    @Test
    void saliencyRunsOnceWhateverTheDecodeLength(PropertyRun run) {
        qt().withExamples(Stress.examples(20)).forAll(smallProtocols(), longs().all()).checkAssert((c, seed) ->
                assertThat(PnMixChecks.saliencyComputedOnce(smallRun(c, seed, run.backend()))).isTrue());
    }

    @Contract(paper = PAPER, check = "mask_unchanged_after_decode")
    @Seeded
    void maskUnchangedAfterDecode(SeedRun run) {
        PnMixResult r = PnMixFixtures.experiment(run).main();
        run.metric("mask_unchanged_after_decode", r.saliency().maskUnchangedAfterDecode()).metric("saliency_mask", r.saliency().mask().asLong());
        assertThat(r.saliency().mask().byteLength()).as("stored mask bytes").isEqualTo(4);
        assertThat(PnMixChecks.maskUnchangedAfterDecode(r)).as("mask after decode").isTrue();
    }

    @Contract(paper = PAPER, check = "mask_unchanged_after_decode")
    @Test
    void maskBytesSurviveAnyDecodeLength(PropertyRun run) {
        qt().withExamples(Stress.examples(20)).forAll(smallProtocols(), longs().all()).checkAssert((c, seed) ->
                assertThat(PnMixChecks.maskUnchangedAfterDecode(smallRun(c, seed, run.backend()))).isTrue());
    }

    @Contract(paper = PAPER, check = "saliency_mask_follows_pair_scores")
    @Seeded
    void saliencyMaskFollowsPairScores(SeedRun run) {
        PnMixExperiment e = PnMixFixtures.experiment(run);
        int mismatches = PnMixChecks.saliencyMaskMismatches(e.main(), e.truth());
        run.metric("saliency_mask", e.main().saliency().mask().asLong()).metric("saliency_mask_mismatches", (long) mismatches);
        assertThat(mismatches).as("pairs or key channels off the specification's saliency").isZero();
        for (int h = 0; h < e.main().config().model().kvHeads(); h++) {
            assertThat(e.main().saliency().mask().highCount(h)).as("high pairs of KV head %d", h).isEqualTo(8);
        }
    }

    @Contract(paper = PAPER, check = "saliency_mask_follows_pair_scores")
    @Test
    void saliencyPicksTopPairsWithTiesToLowerIndex() {
        qt().withExamples(Stress.examples(30)).forAll(smallProtocols(), longs().all(), Generate.booleans()).checkAssert((c, seed, tie) -> {
            Projections t = PnMixFixtures.syntheticTruth(c, seed, c.model().layout());
            if (tie) { // pair 1 a copy of pair 0 in every q and k head: equal scores, pair 0 must win
                copyPair(t.q(), c.model().headDim());
                copyPair(t.k(), c.model().headDim());
            }
            PairMask got = PairSaliency.select(PairSaliency.scores(t, c.cache().sinkTokens(), c.tokens().prefill(), c.model().layout()),
                    c.model().kvHeads(), c.model().pairs(), c.highPairsPerHead());
            assertThat(got).isEqualTo(PnMixChecks.specSaliency(t, c));
            if (tie) {
                for (int h = 0; h < c.model().kvHeads(); h++) {
                    assertThat(got.high(h, 0) || !got.high(h, 1)).as("tie goes to the lower index").isTrue();
                }
            }
        });
    }

    private static void copyPair(double[] rows, int d) {
        for (int i = 0; i < rows.length; i += d) {
            rows[i + 2] = rows[i];
            rows[i + 3] = rows[i + 1];
        }
    }

    // ---- RoPE --------------------------------------------------------------------------------------------

    @Contract(paper = PAPER, check = "rope_pair_norm_invariance")
    @Seeded
    void ropePairNormInvariance(SeedRun run) {
        PnMixExperiment e = PnMixFixtures.experiment(run);
        double adjacent = PnMixChecks.ropePairNormMaxError(e.truth(), PairLayout.ADJACENT);
        PnMixConfig halfSplit = PnMixConfig.pinned().withLayout(PairLayout.HALF_SPLIT);
        Projections hs = new RandomRopeLayer(new Rng(run.seed()), halfSplit)
                .project(HamletTokens.first(halfSplit.totalTokens()).bytes());
        double half = PnMixChecks.ropePairNormMaxError(hs, PairLayout.HALF_SPLIT);
        run.metric("rope_pair_norm_max_error_adjacent", adjacent).metric("rope_pair_norm_max_error_half_split", half);
        assertThat(adjacent).as("adjacent pairs").isLessThanOrEqualTo(run.threshold());
        assertThat(half).as("half-split pairs").isLessThanOrEqualTo(run.threshold());
    }

    @Contract(paper = PAPER, check = "rope_pair_norm_invariance")
    @Test
    void ropeKeepsEveryPairNormInBothLayouts() {
        qt().withExamples(Stress.examples(200)).forAll(Generate.pick(List.of(2, 4, 8, 32, 64, 128)), integers().between(0, 200_000),
                Generate.enumValues(PairLayout.class), longs().all()).checkAssert((d, pos, layout, seed) -> {
                    double[] x = new Rng(seed).normals(2 * d, 0, 10);
                    double[] y = x.clone();
                    PairLayoutRope.apply(y, 0, 2, d, pos, 10000.0, layout);
                    for (int h = 0; h < 2; h++) {
                        for (int p = 0; p < d / 2; p++) {
                            double before = PairLayoutRope.pairNorm(x, 0, h, d, p, layout);
                            assertThat(PairLayoutRope.pairNorm(y, 0, h, d, p, layout)).isCloseTo(before,
                                    org.assertj.core.data.Offset.offset(1e-13 * Math.max(1, before)));
                        }
                    }
                    if (pos == 0) {
                        assertThat(y).containsExactly(x);
                    }
                });
    }

    // ---- quantizer and packing ---------------------------------------------------------------------------

    @Contract(paper = PAPER, check = "quantizer_levels_exact")
    @Seeded
    void quantizerLevelsExact(SeedRun run) {
        PnMixExperiment e = PnMixFixtures.experiment(run);
        PnMixResult r = e.main();
        // The implementation's cache read back by its own dequantize; the metadata bytes, which the paper fixes, as stored.
        long bad = PnMixChecks.quantizerLevelMismatches(r.finalCache(), PnMixKernelChecks.reader(run.backend()), e.truth().k(), e.truth().v());
        run.metric("key_mse", r.quality().keyMse()).metric("value_mse", r.quality().valueMse()).metric("quantizer_level_mismatches", bad);
        assertThat(bad).as("quantization groups off protocols.md (pn-mix)'s levels").isZero();
    }

    @Contract(paper = PAPER, check = "quantizer_levels_exact")
    @Test
    void groupLevelsAndCodesFollowTheDefinition(PropertyRun run) {
        PackedCacheOps ops = PackedCacheOps.forBackend(run.backend());
        Gen<double[]> groups = integers().between(1, 40).zip(longs().all(), integers().between(0, 3), (n, seed, kind) -> {
            Rng r = new Rng(seed);
            double[] x = new double[n];
            for (int i = 0; i < n; i++) {
                // kinds: normal values, a constant group, signed zeros with a few values, wide-range values
                x[i] = switch (kind) {
                    case 0 -> HalfFloat.roundToHalf(r.normal());
                    case 1 -> 1.5;
                    case 2 -> r.uniform() < 0.5 ? (r.uniform() < 0.5 ? 0.0 : -0.0) : HalfFloat.roundToHalf(r.normal());
                    default -> HalfFloat.roundToHalf(r.normal() * 300);
                };
            }
            return x;
        });
        qt().withExamples(Stress.examples(300)).forAll(groups, integers().between(1, 8)).checkAssert((x, bits) -> {
            PackedBlock b = ops.quantizePerChannel(x, x.length, new int[] {bits}, OneBitLevels.CONDITIONAL_MEANS);
            assertThat(PnMixChecks.byteCountFaults(oneGroup(x.length, bits, b))).as("group %s at %d bits", Arrays.toString(x), bits).isEmpty();
            double[] back = ops.dequantizePerChannel(b, x.length, new int[] {bits});
            assertThat(PnMixChecks.groupMatchesSpec(x, bits, b, 0, back)).as("group %s at %d bits", Arrays.toString(x), bits).isTrue();
            for (int i = 0; i < x.length; i++) {
                if (bits >= 2 && b.scale(0) >= 0x1.0p-14) {
                    Stress.figure("dequantization_error", Math.abs(back[i] - x[i]), "<=", b.scale(0) / 2,
                            () -> Arrays.toString(x) + " at " + bits + " bits");
                    assertThat(Math.abs(back[i] - x[i])).as("half-step bound").isLessThanOrEqualTo(b.scale(0) / 2);
                }
                if (Arrays.stream(x).allMatch(v -> v == x[0])) {
                    assertThat(back[i]).as("a constant group comes back exactly").isEqualTo(x[0]);
                }
            }
        });
    }

    /** A cache of one quantized group of one channel (keys {@code b}, no values), to judge a block's byte counts. */
    private static PackedKvCache oneGroup(int tokens, int bits, PackedBlock keys) {
        return new PackedKvCache(1, 1, 0, new byte[0], new byte[0], tokens,
                List.of(new PackedKvCache.Group(keys, new int[] {bits}, new PackedBlock(new byte[BitPacking.tokenGroupBytes(1, 8) * tokens], new byte[4 * tokens]))),
                8, 1, 0, new byte[0], new byte[0]);
    }

    @Contract(paper = PAPER, check = "pack_unpack_roundtrip")
    @Seeded
    void packUnpackRoundTrip(SeedRun run) {
        PnMixResult r = PnMixFixtures.experiment(run).main();
        long bad = PnMixChecks.packRoundTripMismatches(r.finalCache(), PackedCacheOps.forBackend(run.backend()));
        run.metric("pack_unpack_mismatches", bad);
        assertThat(bad).as("bytes or codes that do not survive unpack + pack").isZero();
    }

    @Contract(paper = PAPER, check = "pack_unpack_roundtrip")
    @Test
    void codesOfOneToEightBitsSurvivePackAndUnpack(PropertyRun run) {
        PackedCacheOps ops = PackedCacheOps.forBackend(run.backend());
        qt().withExamples(Stress.examples(200)).forAll(integers().between(1, 40), integers().between(1, 6), integers().between(1, 8), longs().all())
                .checkAssert((tokens, channels, tokenBits, seed) -> {
                    Rng r = new Rng(seed);
                    int[] bits = new int[channels];
                    for (int c = 0; c < channels; c++) {
                        bits[c] = 1 + (int) (r.uniform() * 8);
                    }
                    int[] codes = new int[tokens * channels];
                    boolean constant = r.uniform() < 0.2;
                    for (int i = 0; i < codes.length; i++) {
                        int b = bits[i % channels];
                        codes[i] = constant ? (1 << b) - 1 : (int) (r.uniform() * (1 << b));
                    }
                    int groupChannels = channels % 2 == 0 && r.uniform() < 0.5 ? 2 : channels;
                    assertThat(PnMixChecks.codeRoundTripMismatches(ops, codes, tokens, bits, groupChannels, tokenBits))
                            .isZero();
                    // The paper fixes the byte counts (one stream per channel, whole bytes), not the order of the bits.
                    byte[] packed = ops.packPerChannel(codes, tokens, bits);
                    assertThat(packed.length).as("bytes of %d tokens over %d channels of %s bits", tokens, channels, Arrays.toString(bits))
                            .isEqualTo(BitPacking.channelOffsets(tokens, bits)[channels]);
                    int[] tokenCodes = Arrays.stream(codes).map(x -> x & ((1 << tokenBits) - 1)).toArray();
                    assertThat(ops.packPerToken(tokenCodes, tokens, channels, groupChannels, tokenBits).length)
                            .as("bytes of %d tokens in groups of %d channels at %d bits", tokens, groupChannels, tokenBits)
                            .isEqualTo(tokens * (channels / groupChannels) * BitPacking.tokenGroupBytes(groupChannels, tokenBits));
                });
    }

    // ---- attention -----------------------------------------------------------------------------------------

    @Contract(paper = PAPER, check = "packed_attention_matches_dequantized_oracle")
    @Seeded
    void packedAttentionMatchesDequantizedOracle(SeedRun run) {
        PnMixResult r = PnMixFixtures.experiment(run).main();
        run.metric("attention_kl", r.quality().attentionKl()).metric("attention_output_mse", r.quality().attentionOutputMse())
                .metric("attention_output_cosine", r.quality().attentionOutputCosine())
                .metric("packed_vs_dequantized_attention_max_error", r.quality().packedVsOracleMaxError());
        assertThat(PnMixChecks.packedMatchesOracle(r, run.threshold()))
                .as("packed attention vs dequantized oracle: %s", r.quality().packedVsOracleMaxError()).isTrue();
    }

    /** Property half: the run's packed attention against the fp64 definition over its own dequantized cache, in every regime. */
    @Contract(paper = PAPER, check = "packed_attention_matches_dequantized_oracle")
    @Test
    void packedAttentionEqualsAttentionOverTheDequantizedCache(PropertyRun run) {
        packedAttentionWithinBoundOverRegimes(PackedCacheOps.forBackend(run.backend()), Stress.examples(40), PackedAttentionRegimes.BUDGET);
    }

    /**
     * Over {@link PackedAttentionRegimes}: the implementation's own quantizers build the cache and its own dequantize
     * reads it back (its bit order is its own; the byte counts are the paper's); mechspec's fp64 attention over what it
     * read is the oracle. Within the forward error bound of an fp64 computation, its own dequantization and the oracle's
     * error; never NaN or infinite.
     */
    static void packedAttentionWithinBoundOverRegimes(PackedCacheOps ops, int examples, long budget) {
        qt().withExamples(examples).forAll(PackedAttentionRegimes.draws(budget)).checkAssert(w -> {
            PackedAttentionRegimes.Case c = PackedAttentionRegimes.build(w, ops);
            PnMixChecks.requirePaperByteCounts(c.cache());
            double[] packed = ops.attend(c.cache(), c.q(), c.config().model().queryHeads(), w.queries(), w.causal(), false).out();
            double[] oracle = CpuBackend.INSTANCE.attention(c.shape(), c.q(), c.k(), c.v(), null);
            AttentionRegimes.judgeWithinBound("packed_vs_oracle_max_error", packed, oracle, 2 * c.bound(c.q(), FlashRule.FP64_UNIT_ROUNDOFF), c);
        });
    }

    @Contract(paper = PAPER, check = "online_matches_final_outside_requantized_window")
    @Seeded
    void onlineMatchesFinalOutsideRequantizedWindow(SeedRun run) {
        PnMixResult r = PnMixFixtures.experiment(run).main();
        run.metric("online_vs_final_cache_attention_max_delta", r.calls().onlineVsFinalMaxDelta())
                .metric("online_vs_final_unchanged_window_max_delta", r.calls().unchangedWindowMaxDelta())
                .metric("online_vs_final_unchanged_window_queries", (long) r.calls().unchangedWindowQueries());
        assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(r, run.threshold()))
                .as("unchanged window %s over %d queries, changed window %s over %d", r.calls().unchangedWindowMaxDelta(),
                        r.calls().unchangedWindowQueries(), r.calls().changedWindowMaxDelta(), r.calls().changedWindowQueries()).isTrue();
    }

    @Contract(paper = PAPER, check = "online_matches_final_outside_requantized_window")
    @Test
    void batchedCausalCallReproducesOnlineCallsOverUnchangedStorage(PropertyRun run) {
        qt().withExamples(Stress.examples(20)).forAll(smallProtocols(), longs().all()).checkAssert((c, seed) ->
                assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(smallRun(c, seed, run.backend()), 1e-12)).isTrue());
    }

    @Contract(paper = PAPER, check = "attention_calls_counted")
    @Seeded
    void attentionCallsCounted(SeedRun run) {
        PnMixResult r = PnMixFixtures.experiment(run).main();
        run.metric("actual_attention_calls", (long) r.calls().attentionCalls());
        assertThat(PnMixChecks.attentionCallsCounted(r)).as("attention calls %d", r.calls().attentionCalls()).isTrue();
        assertThat((long) r.calls().attentionCalls()).isEqualTo(PnMixFixtures.seedRunMetrics().get("actual_attention_calls").asLong());
    }

    @Contract(paper = PAPER, check = "attention_calls_counted")
    @Test
    void oneCallPerStepPlusOneBatched(PropertyRun run) {
        qt().withExamples(Stress.examples(20)).forAll(smallProtocols(), longs().all()).checkAssert((c, seed) ->
                assertThat(PnMixChecks.attentionCallsCounted(smallRun(c, seed, run.backend()))).isTrue());
    }

    // ---- the mechanism against its baselines ---------------------------------------------------------------

    @Contract(paper = PAPER, check = "pair_saliency_beats_random_mask")
    @Seeded
    void pairSaliencyBeatsRandomMask(SeedRun run) {
        PnMixExperiment e = PnMixFixtures.experiment(run);
        run.metric("attention_kl", e.main().quality().attentionKl()).metric("random_mask_attention_kl_mean", e.randomMaskKlMean());
        assertThat(PnMixChecks.saliencyBeatsRandomMasks(e)).as("saliency KL %s vs random-mask mean %s",
                e.main().quality().attentionKl(), e.randomMaskKlMean()).isTrue();
    }

    @Contract(paper = PAPER, check = "pair_saliency_beats_random_mask")
    @Test
    void saliencyBeatsRandomMasksWhenPairScalesDiffer(PropertyRun run) {
        qt().withExamples(Stress.examples(6)).forAll(longs().between(0, 1L << 40)).checkAssert(seed -> {
            PnMixExperiment e = PlantedPairs.experiment(seed, run.backend());
            assertThat(PnMixChecks.saliencyBeatsRandomMasks(e)).as("KL %s vs %s", e.main().quality().attentionKl(), e.randomMaskKlMean()).isTrue();
        });
    }

    @Contract(paper = PAPER, check = "mixed_precision_beats_uniform_at_equal_bytes")
    @Seeded
    void mixedPrecisionBeatsUniformAtEqualBytes(SeedRun run) {
        PnMixExperiment e = PnMixFixtures.experiment(run);
        run.metric("attention_kl", e.main().quality().attentionKl()).metric("uniform_2bit_attention_kl", e.uniform().quality().attentionKl())
                .metric("quantized_key_bytes", e.main().storage().quantizedKeyBytes())
                .metric("uniform_2bit_quantized_key_bytes", e.uniform().storage().quantizedKeyBytes())
                .metric("uniform_2bit_key_bytes", e.uniform().storage().keyBytes())
                .metric("quantized_key_bytes_budget", ConfigCounts.quantizedKeyBytesBudget(e.main().config(), e.main().tokens(),
                        e.main().config().cache().highBits(), e.main().config().cache().lowBits(), 2 * e.main().config().highPairsPerHead()));
        assertThat(PnMixChecks.mixedBeatsUniformAtEqualBytes(e)).as("mixed KL %s vs uniform 2-bit KL %s at %d vs %d quantized key bytes",
                e.main().quality().attentionKl(), e.uniform().quality().attentionKl(), e.main().storage().quantizedKeyBytes(), e.uniform().storage().quantizedKeyBytes()).isTrue();
    }

    /**
     * On planted instances mixed precision beats uniform 2-bit at equal bytes on average, not on every one: of planted
     * seeds 0..119, seeds 39 (KL 0.837 vs 0.793) and 65 have uniform 2-bit ahead, as this property once found. So it
     * draws six instances at a time and requires every byte count to match, a lower mean KL and a win on at least four.
     */
    @Contract(paper = PAPER, check = "mixed_precision_beats_uniform_at_equal_bytes")
    @Test
    void mixedBeatsUniformOnAverageWhenPairScalesDiffer(PropertyRun run) {
        qt().withExamples(Stress.examples(1)).forAll(lists().of(longs().between(0, 1L << 40)).ofSize(6)).checkAssert(seeds -> {
            double mixedKl = 0;
            double uniformKl = 0;
            int wins = 0;
            for (long seed : seeds) {
                PnMixExperiment e = PlantedPairs.experiment(seed, run.backend());
                double m = e.main().quality().attentionKl();
                double u = e.uniform().quality().attentionKl();
                // Equal bytes must hold on every instance: only the KL comparison is statistical.
                assertThat(PnMixChecks.equalQuantizedKeyBytes(e)).as("quantized key bytes at seed %d", seed).isTrue();
                mixedKl += m;
                uniformKl += u;
                wins += PnMixChecks.mixedBeatsUniformAtEqualBytes(e) ? 1 : 0;
            }
            assertThat(mixedKl < uniformKl && wins >= 4).as("seeds %s: mean KL %s vs %s, %d of 6 won", seeds, mixedKl / 6,
                    uniformKl / 6, wins).isTrue();
        });
    }

    // ---- determinism -----------------------------------------------------------------------------------------

    @Contract(paper = PAPER, check = "same_seed_metrics_identical")
    @Seeded
    void sameSeedMetricsIdentical(SeedRun run) {
        PnMixExperiment first = PnMixFixtures.experiment(run);
        PnMixExperiment again = PnMixExperiment.run(run.seed(), run.backend());
        boolean same = PnMixChecks.metricsIdentical(first.metrics(), again.metrics());
        run.metric("same_seed_metrics_identical", same);
        assertThat(same).as("every metric of a second run of seed %d bit for bit", run.seed()).isTrue();
    }

    @Contract(paper = PAPER, check = "same_seed_metrics_identical")
    @Test
    void smallRunsRepeatBitForBit(PropertyRun run) {
        qt().withExamples(Stress.examples(10)).forAll(smallProtocols(), longs().all()).checkAssert((c, seed) ->
                assertThat(PnMixChecks.metricsIdentical(smallRun(c, seed, run.backend()).metrics(),
                        smallRun(c, seed, run.backend()).metrics())).isTrue());
    }

    // ---- CUDA kernels against their CPU twins --------------------------------------------------------------

    @Contract(paper = PAPER, check = "cuda_quantize_pack_bit_equal")
    @Seeded(gpu = true)
    @Tag("gpu")
    void cudaQuantizePackBitEqual(SeedRun run) {
        PackedCacheOps device = PackedCacheOps.forBackend(run.backend());
        // mechspec's CUDA twin shares the CPU's layout, bit for bit; an outside implementation's layout is its own.
        long bad = device instanceof WorkerPackedCacheOps
                ? PnMixKernelChecks.quantizePackMismatchesOwnLayout(device, new CpuPackedCacheOps(), run.seed())
                : PnMixKernelChecks.quantizePackMismatches(device, new CpuPackedCacheOps(), run.seed());
        run.metric("cuda_quantize_pack_mismatches", bad);
        assertThat(bad).as("bytes, codes or values differing from the CPU twin").isZero();
    }

    @Contract(paper = PAPER, check = "cuda_packed_attention_flash_rule")
    @Seeded(gpu = true)
    @Tag("gpu")
    void cudaPackedAttentionFlashRule(SeedRun run) {
        PackedCacheOps device = PackedCacheOps.forBackend(run.backend());
        FlashRule.Verdict worst64 = null;
        FlashRule.Verdict worst32 = null;
        List<FlashRule.Verdict> all = new java.util.ArrayList<>();
        for (int which = 0; which < 2; which++) {
            PnMixKernelChecks.AttentionCase a = PnMixKernelChecks.attentionCase(run.seed(), which, PnMixKernelChecks.owner(device));
            FlashRule.Verdict v64 = PnMixKernelChecks.attentionFp64(device, a);
            FlashRule.Verdict v32 = PnMixKernelChecks.attentionFp32(device, a);
            all.add(v64);
            all.add(v32);
            worst64 = larger(worst64, v64);
            worst32 = larger(worst32, v32);
        }
        run.metric("cuda_packed_attention_fp64_max_error", worst64.maxError()).metric("cuda_packed_attention_fp64_bound", worst64.bound())
                .metric("cuda_packed_attention_fp32_max_error", worst32.maxError()).metric("cuda_packed_attention_fp32_bound", worst32.bound());
        // Every case must hold: the largest error need not come with the tightest bound, and non-finite
        // (unwritten) elements are left out of maxError, so judging only the worst-by-error verdict could pass a failure.
        all.forEach(PnMixContracts::flashRuleHolds);
    }

    @Contract(paper = PAPER, check = "cuda_split_k_decode_flash_rule")
    @Seeded(gpu = true)
    @Tag("gpu")
    void cudaSplitKDecodeFlashRule(SeedRun run) {
        PackedCacheOps device = PackedCacheOps.forBackend(run.backend());
        FlashRule.Verdict worst64 = null;
        FlashRule.Verdict worst32 = null;
        java.util.Map<String, FlashRule.Verdict> all = new java.util.LinkedHashMap<>();
        for (PnMixKernelChecks.DecodeCase c : PnMixKernelChecks.decodeCases(run.seed(), PnMixKernelChecks.owner(device))) {
            for (PackedKvCache cache : List.of(c.packed(), c.fp16())) {
                String which = c.name() + (cache == c.packed() ? " packed" : " fp16");
                FlashRule.Verdict v64 = PnMixKernelChecks.decodeFp64(device, cache, c);
                FlashRule.Verdict v32 = PnMixKernelChecks.decodeFp32(device, cache, c);
                all.put(which + " fp64", v64);
                all.put(which + " fp32", v32);
                worst64 = larger(worst64, v64);
                worst32 = larger(worst32, v32);
            }
            // The packed cache again with another query, right after the first: an implementation that answers from
            // an output it kept for the cache, or whose kernel leaves state behind (the split-K counters), is wrong here.
            FlashRule.Verdict again = PnMixKernelChecks.decodeFp64AfterAnother(device, c.packed(), c, c.withSecondQuery());
            all.put(c.name() + " packed fp64, a second query", again);
            worst64 = larger(worst64, again);
        }
        run.metric("cuda_split_k_decode_fp64_max_error", worst64.maxError()).metric("cuda_split_k_decode_fp64_bound", worst64.bound())
                .metric("cuda_split_k_decode_fp32_max_error", worst32.maxError()).metric("cuda_split_k_decode_fp32_bound", worst32.bound())
                .metric("cuda_split_k_decode_cases", (long) all.size());
        all.forEach((which, v) -> assertThat(v.holds()).as("%s: %s", which, v).isTrue());
    }

    /** Property half: the run's fp32 packed attention within an fp32 computation's bound of the fp64 definition, in every regime. */
    @Contract(paper = PAPER, check = "cuda_packed_attention_flash_rule")
    @Test
    void fp32PackedAttentionWithinNoiseOfTheOracle(PropertyRun run) {
        fp32PackedAttentionWithinBoundOverRegimes(PackedCacheOps.forBackend(run.backend()), Stress.examples(30), PackedAttentionRegimes.BUDGET);
    }

    /** As {@link #packedAttentionWithinBoundOverRegimes}, for q rounded to fp32 and an fp32 computation. */
    static void fp32PackedAttentionWithinBoundOverRegimes(PackedCacheOps ops, int examples, long budget) {
        qt().withExamples(examples).forAll(PackedAttentionRegimes.draws(budget)).checkAssert(w -> {
            PackedAttentionRegimes.Case c = PackedAttentionRegimes.build(w, ops);
            float[] qf = FloatArrays.narrow(c.q());
            double[] q = FloatArrays.widen(qf);
            double[] out = FloatArrays.widen(ops.attendFp32(c.cache(), qf, c.config().model().queryHeads(), w.queries(), w.causal()));
            double[] oracle = CpuBackend.INSTANCE.attention(c.shape(), q, c.k(), c.v(), null);
            AttentionRegimes.judgeWithinBound("packed_attention_fp32_max_error", out, oracle,
                    c.bound(q, FlashRule.FP32_UNIT_ROUNDOFF) + c.bound(q, FlashRule.FP64_UNIT_ROUNDOFF), c);
        });
    }


    /** The verdict with the larger error: {@code v} when there is none yet. */
    private static FlashRule.Verdict larger(FlashRule.Verdict worst, FlashRule.Verdict v) {
        return worst == null || v.maxError() > worst.maxError() ? v : worst;
    }

    static void flashRuleHolds(FlashRule.Verdict v) {
        Stress.figure("max_error", v.maxError(), "<=", v.bound(), () -> v);
        assertThat(v.holds()).as("%s", v).isTrue();
    }
}
