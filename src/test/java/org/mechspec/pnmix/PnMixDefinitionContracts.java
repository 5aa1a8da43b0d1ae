package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mechspec.spec.Properties.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.compute.Rng;
import org.mechspec.spec.Contract;
import org.mechspec.spec.PropertyRun;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;
import org.mechspec.spec.Stress;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * pn-mix's checks against definitions written apart from the mechanism: RoPE's angles and relative-position
 * property, the layer and the random masks from the seed's stream, and the error figures recomputed.
 */
@Tag("pn-mix")
class PnMixDefinitionContracts {
    private static final String PAPER = "pn-mix";

    /** Small layers: head counts, head dims, model dims (1/√dm exact or not), either layout, θ. */
    private static Gen<PnMixConfig> smallLayers() {
        Gen<int[]> heads = Generate.pick(List.of(new int[] {2, 1}, new int[] {4, 2}, new int[] {6, 3}));
        return heads.zip(Generate.pick(List.of(2, 8, 16)), Generate.pick(List.of(1, 3, 16)),
                Generate.enumValues(PairLayout.class), Generate.pick(List.of(10000.0, 1.0e6, 1.5)),
                (h, d, dm, layout, theta) -> new PnMixConfig(new PnMixConfig.Model(256, dm, h[0], h[1], d, theta, layout),
                new PnMixConfig.CachePolicy(2, 4, 4, 0.5, 3, 1, 2, 128, OneBitLevels.CONDITIONAL_MEANS), new PnMixConfig.Tokens(20, 12)));
    }

    private static Projections smallTruth(PnMixConfig c, long seed) {
        return new RandomRopeLayer(new Rng(seed), c).project(PnMixFixtures.syntheticTokens(seed + 1, c.totalTokens()));
    }

    // ---- RoPE ------------------------------------------------------------------------------------------------

    @Contract(paper = PAPER, check = "rope_rotation_angles_exact")
    @Seeded
    void ropeRotationAnglesExact(SeedRun run) {
        PnMixExperiment e = PnMixFixtures.experiment(run);
        PnMixConfig c = e.main().config();
        RopeChecks.Deviation dev = RopeChecks.rotation(e.truth(), c.model().ropeTheta(), c.model().layout());
        long fp16 = RopeChecks.fp16TruthMismatches(e.truth());
        run.metric("rope_rotation_max_error", dev.maxError()).metric("rope_rotation_max_error_over_bound", dev.maxOverBound())
                .metric("rope_fp16_truth_mismatches", fp16);
        assertThat(dev.holds()).as("q, k after RoPE vs the definition's rotation: %s", dev).isTrue();
        assertThat(fp16).as("fp16 truth elements that are not fp16(q, k after RoPE)").isZero();
    }

    @Contract(paper = PAPER, check = "rope_rotation_angles_exact")
    @Test
    void ropeRotatesEveryPairByPositionTimesOmega() {
        qt().withExamples(Stress.examples(200)).forAll(Generate.pick(List.of(2, 4, 8, 32, 128)), integers().between(0, 200_000),
                Generate.pick(List.of(10000.0, 1.0e6, 1.5)), longs().all())
                .checkAssert((d, pos, theta, seed) -> {
                    PairLayout layout = seed % 2 == 0 ? PairLayout.ADJACENT : PairLayout.HALF_SPLIT;
                    double[] x = new Rng(seed).normals(3 * 2 * d, 0, 10);
                    double[] y = x.clone();
                    for (int t = 0; t < 3; t++) {
                        PairLayoutRope.apply(y, t * 2 * d, 2, d, pos + t, theta, layout);
                    }
                    RopeChecks.Deviation dev = RopeChecks.rotation(x, y, 3, 2, d, theta, layout, pos);
                    Stress.figure("rotation_error_over_bound", dev.maxOverBound(), "<=", 1, () -> "seed " + seed + ", d " + d + ", position " + pos);
                    assertThat(dev.holds()).as("%s", dev).isTrue();
                });
        // The layer itself: its q and k after RoPE are the definition's rotation of its q and k before.
        qt().withExamples(Stress.examples(30)).forAll(smallLayers(), longs().all()).checkAssert((c, seed) -> {
            Projections p = smallTruth(c, seed);
            assertThat(RopeChecks.rotation(p, c.model().ropeTheta(), c.model().layout()).holds()).isTrue();
            assertThat(RopeChecks.fp16TruthMismatches(p)).isZero();
        });
    }

    @Contract(paper = PAPER, check = "rope_relative_position")
    @Seeded
    void ropeRelativePosition(SeedRun run) {
        PnMixExperiment e = PnMixFixtures.experiment(run);
        PnMixConfig c = e.main().config();
        RopeChecks.Deviation dev = RopeChecks.relativePosition(e.truth(), c.model().ropeTheta(), c.model().layout());
        run.metric("rope_relative_position_max_error", dev.maxError())
                .metric("rope_relative_position_max_error_over_bound", dev.maxOverBound());
        assertThat(dev.holds()).as("q_m·k_n vs the closed form at m − n: %s", dev).isTrue();
    }

    @Contract(paper = PAPER, check = "rope_relative_position")
    @Test
    void ropeDotDependsOnlyOnTheDistance() {
        Gen<int[]> positions = integers().between(0, 100_000).zip(integers().between(0, 100_000), (m, n) -> new int[] {m, n});
        qt().withExamples(Stress.examples(200)).forAll(Generate.pick(List.of(2, 4, 8, 32, 128)), positions, integers().between(0, 100_000), longs().all())
                .checkAssert((d, mn, shift, seed) -> {
                    int m = mn[0];
                    int n = mn[1];
                    PairLayout layout = seed % 2 == 0 ? PairLayout.ADJACENT : PairLayout.HALF_SPLIT;
                    Rng rng = new Rng(seed);
                    double[] a = rng.normals(d, 0, 3);
                    double[] b = rng.normals(d, 0, 3);
                    // q at m, k at n, and both moved by the same shift: each dot equals the closed form at m − n.
                    for (int s : new int[] {0, shift}) {
                        double[] ar = a.clone();
                        double[] br = b.clone();
                        PairLayoutRope.apply(ar, 0, 1, d, m + s, 10000.0, layout);
                        PairLayoutRope.apply(br, 0, 1, d, n + s, 10000.0, layout);
                        RopeChecks.Deviation dev = RopeChecks.dot(a, ar, b, br, m + s, n + s, 10000.0, layout);
                        assertThat(dev.holds()).as("shift %d: %s", s, dev).isTrue();
                    }
                });
        qt().withExamples(Stress.examples(30)).forAll(smallLayers(), longs().all()).checkAssert((c, seed) ->
                assertThat(RopeChecks.relativePosition(smallTruth(c, seed), c.model().ropeTheta(), c.model().layout()).holds()).isTrue());
    }

    // ---- the seed's stream -------------------------------------------------------------------------------------

    @Contract(paper = PAPER, check = "layer_projections_match_definition")
    @Seeded
    void layerProjectionsMatchDefinition(SeedRun run) {
        PnMixExperiment e = PnMixFixtures.experiment(run);
        PnMixConfig c = e.main().config();
        long bad = StreamChecks.projectionMismatches(e.truth(), HamletTokens.first(c.totalTokens()).bytes(), run.seed(), c);
        run.metric("layer_projection_mismatches", bad);
        assertThat(bad).as("q, k before RoPE and fp16 v off E[token]·W from Rng(seed)").isZero();
    }

    @Contract(paper = PAPER, check = "layer_projections_match_definition")
    @Test
    void layerProjectsTokensThroughTheDrawnWeights() {
        qt().withExamples(Stress.examples(40)).forAll(smallLayers(), longs().all()).checkAssert((c, seed) ->
                assertThat(StreamChecks.projectionMismatches(smallTruth(c, seed), PnMixFixtures.syntheticTokens(seed + 1,
                        c.totalTokens()), seed, c)).isZero());
    }

    @Contract(paper = PAPER, check = "random_masks_follow_definition")
    @Seeded
    void randomMasksFollowDefinition(SeedRun run) {
        PnMixExperiment e = PnMixFixtures.experiment(run);
        PnMixConfig c = e.main().config();
        PairMask[] masks = masks(e);
        long bad = StreamChecks.randomMaskMismatches(masks, run.seed(), c);
        run.metric("random_mask_mismatches", bad);
        assertThat(masks).as("random masks").hasSize(PnMixExperiment.RANDOM_MASKS);
        assertThat(bad).as("random mask flags off the definition's Fisher–Yates draws after W_v").isZero();
        for (PairMask m : masks) {
            for (int h = 0; h < c.model().kvHeads(); h++) {
                assertThat(m.highCount(h)).as("high pairs of KV head %d in %s", h, m).isEqualTo(c.highPairsPerHead());
            }
        }
    }

    static PairMask[] masks(PnMixExperiment e) {
        PairMask[] out = new PairMask[e.randomMasks().length];
        for (int i = 0; i < out.length; i++) {
            out[i] = e.randomMasks()[i].saliency().mask();
        }
        return out;
    }

    @Contract(paper = PAPER, check = "random_masks_follow_definition")
    @Test
    void randomMasksAreFisherYatesDrawsWithEveryHeadsShare() {
        Gen<int[]> shapes = integers().between(1, 4).zip(integers().between(1, 32), (h, p) -> new int[] {h, p});
        qt().withExamples(Stress.examples(200)).forAll(longs().all(), integers().between(1, 10), shapes, integers().between(0, 100))
                .checkAssert((seed, count, shape, percent) -> {
                    int heads = shape[0];
                    int pairs = shape[1];
                    int k = pairs * percent / 100;
                    PairMask[] masks = RandomMasks.draw(new Rng(seed), count, heads, pairs, k);
                    assertThat(StreamChecks.randomMaskMismatches(masks, new Rng(seed), heads, pairs, k)).isZero();
                    for (PairMask m : masks) {
                        for (int h = 0; h < heads; h++) {
                            assertThat(m.highCount(h)).isEqualTo(k);
                        }
                    }
                });
        // End to end: the experiment's masks continue the seed's stream after the layer.
        qt().withExamples(Stress.examples(4)).forAll(longs().all()).checkAssert(seed -> {
            PnMixConfig c = PlantedPairs.config();
            PnMixExperiment e = PnMixExperiment.run(seed, PnMixFixtures.syntheticTokens(seed + 1, c.totalTokens()), "synthetic", c,
                    CpuBackend.INSTANCE);
            assertThat(StreamChecks.randomMaskMismatches(masks(e), seed, c)).isZero();
        });
    }

    // ---- the figures -------------------------------------------------------------------------------------------

    @Contract(paper = PAPER, check = "figures_match_definition")
    @Seeded
    void figuresMatchDefinition(SeedRun run) {
        PnMixExperiment e = PnMixFixtures.experiment(run);
        List<FigureChecks.Figure> figures = FigureChecks.figures(e, PnMixKernelChecks.reader(run.backend()));
        run.metric("figures_max_deviation_over_bound", FigureChecks.maxOverBound(figures));
        for (FigureChecks.Figure f : figures) {
            assertThat(f.holds()).as("%s", f).isTrue();
        }
    }

    @Contract(paper = PAPER, check = "figures_match_definition")
    @Test
    void figuresOfSmallRunsMatchTheirDefinitions(PropertyRun run) {
        qt().withExamples(Stress.examples(20)).forAll(PnMixContracts.smallProtocols(), longs().all()).checkAssert((c, seed) -> {
            Projections truth = PnMixFixtures.syntheticTruth(c, seed, c.model().layout());
            PackedCacheOps ops = PackedCacheOps.forBackend(run.backend());
            PnMixResult r = new PnMixProtocol(c, ops, false).run(truth, KeyPlan.saliency());
            for (FigureChecks.Figure f : FigureChecks.figures(r, truth, ops)) {
                Stress.figure(f.name() + "_deviation_over_bound", f.overBound(), "<=", 1, () -> c + ", seed " + seed);
                assertThat(f.holds()).as("%s", f).isTrue();
            }
        });
        qt().withExamples(Stress.examples(3)).forAll(longs().between(0, 1L << 40)).checkAssert(seed -> {
            for (FigureChecks.Figure f : FigureChecks.figures(PlantedPairs.experiment(seed))) {
                assertThat(f.holds()).as("%s", f).isTrue();
            }
        });
    }
}
