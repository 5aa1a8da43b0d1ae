package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;
import org.mechspec.spec.Breaks;
import org.mechspec.spec.Records;

/**
 * The checks against definitions report false on broken mechanisms that every earlier check let through, and
 * true on the unbroken mechanism over the same input. Broken parts are built here: a broken RoPE or layer as the
 * projections it would produce, broken mask draws, decorators over the backend ops, broken intermediates.
 */
@Tag("pn-mix")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PnMixDefinitionMutantsTest {
    private static final long SEED = 42;
    private final PnMixConfig pinned = PnMixConfig.pinned();
    private final double theta = pinned.model().ropeTheta();
    /** Computed per test instance (not in a static initializer), so a relaunch against a mutant recomputes it. */
    private final Projections truth = PnMixFixtures.syntheticTruth(pinned, SEED, PairLayout.ADJACENT);

    private PnMixResult run(PackedCacheOps ops) {
        return new PnMixProtocol(pinned, ops, true).run(truth, KeyPlan.saliency());
    }

    // ---- RoPE ------------------------------------------------------------------------------------------------

    /** How a broken layer would rotate one row of head vectors at a position. */
    private interface Rotation {
        void apply(double[] x, int offset, int heads, int position);
    }

    private final Rotation rope = (x, off, heads, pos) -> PairLayoutRope.apply(x, off, heads, 32, pos, theta, PairLayout.ADJACENT);

    /** The projections a layer with these rotations for q and k (and these pre-RoPE q) would produce. */
    private static Projections rotated(Projections p, double[] qPre, Rotation q, Rotation k) {
        double[] qr = qPre.clone();
        double[] kr = p.kPreRope().clone();
        for (int t = 0; t < p.tokens(); t++) {
            q.apply(qr, t * p.qWidth(), p.queryHeads(), t);
            k.apply(kr, t * p.kvWidth(), p.kvHeads(), t);
        }
        return new Projections(p.tokens(), p.queryHeads(), p.kvHeads(), p.headDim(), qPre, p.kPreRope(), qr, kr, half(qr), half(kr), p.v());
    }

    private static double[] half(double[] a) {
        return Arrays.stream(a).map(HalfFloat::roundToHalf).toArray();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "rope_rotation_angles_exact")
    @Breaks(paper = "pn-mix", check = "rope_relative_position")
    void queriesNeverRotatedBreakTheAnglesAndTheRelativePositionButKeepPairNorms() {
        Projections broken = rotated(truth, truth.qPreRope(), (x, off, heads, pos) -> { }, rope);
        assertThat(RopeChecks.rotation(truth, theta, PairLayout.ADJACENT).holds()).isTrue();
        assertThat(RopeChecks.relativePosition(truth, theta, PairLayout.ADJACENT).holds()).isTrue();
        assertThat(RopeChecks.rotation(broken, theta, PairLayout.ADJACENT).holds()).isFalse();
        assertThat(RopeChecks.relativePosition(broken, theta, PairLayout.ADJACENT).holds()).isFalse();
        // The survivor: the identity keeps every pair norm, so the invariance check alone passes it.
        assertThat(PnMixChecks.ropePairNormMaxError(broken, PairLayout.ADJACENT)).isLessThanOrEqualTo(1e-12);
    }

    @Test
    @Breaks(paper = "pn-mix", check = "rope_rotation_angles_exact")
    @Breaks(paper = "pn-mix", check = "rope_relative_position")
    void aWrongBaseBreaksTheAnglesAndTheClosedForm() {
        // theta' = sqrt(theta) gives omega_i = theta^(-i/d) instead of theta^(-2i/d).
        Rotation wrong = (x, off, heads, pos) -> PairLayoutRope.apply(x, off, heads, 32, pos, StrictMath.sqrt(theta), PairLayout.ADJACENT);
        Projections broken = rotated(truth, truth.qPreRope(), wrong, wrong);
        assertThat(RopeChecks.rotation(broken, theta, PairLayout.ADJACENT).holds()).isFalse();
        assertThat(RopeChecks.relativePosition(broken, theta, PairLayout.ADJACENT).holds()).isFalse();
        assertThat(PnMixChecks.ropePairNormMaxError(broken, PairLayout.ADJACENT)).isLessThanOrEqualTo(1e-12);
    }

    @Test
    @Breaks(paper = "pn-mix", check = "rope_rotation_angles_exact")
    void positionsOffByOneBreakTheAnglesThoughDotsStillDependOnlyOnTheDistance() {
        Rotation late = (x, off, heads, pos) -> PairLayoutRope.apply(x, off, heads, 32, pos + 1, theta, PairLayout.ADJACENT);
        Projections broken = rotated(truth, truth.qPreRope(), late, late);
        assertThat(RopeChecks.rotation(broken, theta, PairLayout.ADJACENT).holds()).isFalse();
        assertThat(RopeChecks.relativePosition(broken, theta, PairLayout.ADJACENT).holds()).isTrue();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "rope_rotation_angles_exact")
    void queriesLeftInFp64BreakTheFp16Truth() {
        Projections p = truth;
        Projections broken = new Projections(p.tokens(), p.queryHeads(), p.kvHeads(), p.headDim(), p.qPreRope(), p.kPreRope(),
                p.qRope(), p.kRope(), p.qRope(), p.k(), p.v());
        assertThat(RopeChecks.fp16TruthMismatches(truth)).isZero();
        assertThat(RopeChecks.fp16TruthMismatches(broken)).isPositive();
    }

    // ---- the layer ---------------------------------------------------------------------------------------------

    @Test
    @Breaks(paper = "pn-mix", check = "layer_projections_match_definition")
    void unscaledQueryWeightsAndShiftedTokensBreakTheProjections() {
        byte[] tokens = PnMixFixtures.syntheticTokens(SEED + 1, pinned.totalTokens());
        assertThat(StreamChecks.projectionMismatches(truth, tokens, SEED, pinned)).isZero();
        // W_q without its 1/16: q before RoPE 16x, rotated consistently, so the RoPE checks still pass.
        double[] q16 = Arrays.stream(truth.qPreRope()).map(x -> 16 * x).toArray();
        Projections unscaled = rotated(truth, q16, rope, rope);
        assertThat(RopeChecks.rotation(unscaled, theta, PairLayout.ADJACENT).holds()).isTrue();
        assertThat(StreamChecks.projectionMismatches(unscaled, tokens, SEED, pinned)).isPositive();
        // An embedding lookup one row off.
        byte[] next = tokens.clone();
        for (int i = 0; i < next.length; i++) {
            next[i]++;
        }
        Projections offByOne = new RandomRopeLayer(new Rng(SEED), pinned).project(next);
        assertThat(StreamChecks.projectionMismatches(offByOne, tokens, SEED, pinned)).isPositive();
    }

    // ---- random masks ------------------------------------------------------------------------------------------

    @Test
    @Breaks(paper = "pn-mix", check = "random_masks_follow_definition")
    void masksGivingLaterHeadsNoHighPairsOrABiasedShuffleBreakTheRandomMaskCheck() {
        PnMixConfig c = PlantedPairs.config();
        PnMixExperiment e = PnMixExperiment.run(SEED, PnMixFixtures.syntheticTokens(SEED + 1, c.totalTokens()), "synthetic", c,
                CpuBackend.INSTANCE);
        PairMask[] masks = PnMixDefinitionContracts.masks(e);
        assertThat(StreamChecks.randomMaskMismatches(masks, SEED, c)).isZero();

        PairMask[] headZeroOnly = new PairMask[masks.length];
        for (int m = 0; m < masks.length; m++) {
            boolean[] high = new boolean[c.model().kvHeads() * c.model().pairs()];
            for (int p = 0; p < c.model().pairs(); p++) {
                high[p] = masks[m].high(0, p);
            }
            headZeroOnly[m] = PairMask.of(c.model().kvHeads(), c.model().pairs(), high);
        }
        assertThat(StreamChecks.randomMaskMismatches(headZeroOnly, SEED, c)).isPositive();

        // Sattolo's shuffle (j = floor(u·i)) from the same stream position: only cyclic permutations.
        Rng rng = new Rng(SEED);
        new RandomRopeLayer(rng, c);
        PairMask[] sattolo = new PairMask[masks.length];
        for (int m = 0; m < masks.length; m++) {
            boolean[] high = new boolean[c.model().kvHeads() * c.model().pairs()];
            for (int h = 0; h < c.model().kvHeads(); h++) {
                int[] perm = new int[c.model().pairs()];
                Arrays.setAll(perm, i -> i);
                for (int i = perm.length - 1; i >= 1; i--) {
                    int j = (int) (rng.uniform() * i);
                    int tmp = perm[i];
                    perm[i] = perm[j];
                    perm[j] = tmp;
                }
                for (int k = 0; k < c.highPairsPerHead(); k++) {
                    high[h * c.model().pairs() + perm[k]] = true;
                }
            }
            sattolo[m] = PairMask.of(c.model().kvHeads(), c.model().pairs(), high);
        }
        assertThat(StreamChecks.randomMaskMismatches(sattolo, SEED, c)).isPositive();
    }

    // ---- equal bytes, the online window, the sink ----------------------------------------------------------------

    /** The check as it was: the two runs' counters equal, then the KL comparison. */
    private static boolean counterPremise(PnMixExperiment e) {
        return e.main().storage().quantizedKeyBytes() == e.uniform().storage().quantizedKeyBytes() && e.main().quality().attentionKl() < e.uniform().quality().attentionKl();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "mixed_precision_beats_uniform_at_equal_bytes")
    void aBaselineThatIsNotUniformOrACounterWithoutScaleAndZeroBreakTheEqualBytesPremise() {
        PnMixExperiment e = PlantedPairs.experiment(SEED);
        assertThat(PnMixChecks.mixedBeatsUniformAtEqualBytes(e)).isTrue();
        // The "uniform" baseline is a 3/1-bit run under a random mask: same bytes, not uniform.
        PnMixExperiment mixedBaseline = Records.with(e, "uniform", e.randomMasks()[0]);
        assertThat(counterPremise(mixedBaseline)).as("the counter-only premise lets it through").isTrue();
        assertThat(PnMixChecks.mixedBeatsUniformAtEqualBytes(mixedBaseline)).isFalse();
        // Both counters forget the 4 bytes of fp16 scale and zero per channel and group.
        long meta = 4L * e.main().config().model().kvChannels() * e.main().finalCache().groups().size();
        PnMixExperiment codesOnly = Records.with(Records.with(e, "main", Records.with(e.main(), "quantizedKeyBytes",
                e.main().storage().quantizedKeyBytes() - meta)), "uniform", Records.with(e.uniform(), "quantizedKeyBytes",
                e.uniform().storage().quantizedKeyBytes() - meta));
        assertThat(counterPremise(codesOnly)).isTrue();
        assertThat(PnMixChecks.mixedBeatsUniformAtEqualBytes(codesOnly)).isFalse();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "online_matches_final_outside_requantized_window")
    void classifyingEveryDecodeQueryAsRequantizedBreaksTheOnlineVsFinalCheck() {
        PnMixResult r = run(new DelegatingOps());
        assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(r, 1e-12)).isTrue();
        PnMixResult allChanged = Records.with(Records.with(Records.with(Records.with(r, "unchangedWindowQueries", 0),
                "changedWindowQueries", pinned.tokens().decode()), "unchangedWindowMaxDelta", 0.0), "changedWindowMaxDelta",
                r.calls().onlineVsFinalMaxDelta());
        // The old predicate: nothing in the unchanged window, something changed in the other; vacuously true.
        assertThat(allChanged.calls().unchangedWindowMaxDelta() <= 1e-12 && allChanged.calls().changedWindowMaxDelta() > 1e-12).isTrue();
        assertThat(PnMixChecks.onlineMatchesFinalOutsideRequantizedWindow(allChanged, 1e-12)).isFalse();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "sink_keys_exact")
    void aSinkByteThatDiffersFromTheTruthBreaksTheSinkCheckEvenWhenTheReportSaysZero() {
        PnMixResult r = run(new DelegatingOps());
        assertThat(PnMixChecks.sinkKeysExact(r, truth.k(), 0.0)).isTrue();
        PackedKvCache c = r.finalCache();
        byte[] sink = c.sinkKeys().clone();
        sink[7] ^= 0x01;
        PackedKvCache flipped = new PackedKvCache(c.kvHeads(), c.headDim(), c.sinkTokens(), sink, c.sinkValues(), c.groupTokens(),
                c.groups(), c.valueBits(), c.valueGroupChannels(), c.residualTokens(), c.residualKeys(), c.residualValues());
        PnMixResult broken = Records.with(r, "finalCache", flipped);
        assertThat(broken.quality().sinkKeyMaxError()).as("the reported figure").isZero();
        assertThat(PnMixChecks.sinkKeysExact(broken, truth.k(), 0.0)).isFalse();
    }

    // ---- the figures -------------------------------------------------------------------------------------------

    /** A reference whose keys are one position late (token j gets token j−1's key); the quantized calls are intact. */
    private static final class LateReferenceOps extends DelegatingOps {
        @Override
        public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal, boolean withLogits) {
            if (cache.sinkTokens() > 0 || !cache.groups().isEmpty()) {
                return cpu.attend(cache, q, queryHeads, queryLen, causal, withLogits);
            }
            int row = 2 * cache.channels();
            byte[] keys = cache.residualKeys().clone();
            System.arraycopy(cache.residualKeys(), 0, keys, row, keys.length - row);
            return cpu.attend(PackedKvCache.fp16(cache.kvHeads(), cache.headDim(), cache.residualTokens(), keys, cache.residualValues()),
                    q, queryHeads, queryLen, causal, withLogits);
        }
    }

    /** Values read back 2^-8 too high (the readback the value MSE uses; attention reads the packed codes itself). */
    private static final class HighValueReadbackOps extends DelegatingOps {
        @Override
        public double[] dequantizePerToken(PackedBlock block, int tokens, int channels, int groupChannels, int bits) {
            return Arrays.stream(cpu.dequantizePerToken(block, tokens, channels, groupChannels, bits)).map(x -> x + 0x1.0p-8).toArray();
        }
    }

    private static FigureChecks.Figure figure(List<FigureChecks.Figure> figures, String name) {
        return figures.stream().filter(f -> f.name().equals(name)).findFirst().orElseThrow();
    }

    @Test
    @Breaks(paper = "pn-mix", check = "figures_match_definition")
    void aLateReferenceOrAnOffValueReadbackBreaksTheFigures() {
        List<FigureChecks.Figure> good = FigureChecks.figures(run(new DelegatingOps()), truth);
        assertThat(good).allMatch(FigureChecks.Figure::holds);

        PnMixResult late = run(new LateReferenceOps());
        assertThat(PnMixChecks.packedMatchesOracle(late, 1e-12)).as("the quantized side is intact").isTrue();
        List<FigureChecks.Figure> lateFigures = FigureChecks.figures(late, truth);
        assertThat(figure(lateFigures, "attention_kl").holds()).as("%s", figure(lateFigures, "attention_kl")).isFalse();
        assertThat(figure(lateFigures, "attention_output_mse").holds()).isFalse();
        assertThat(figure(lateFigures, "attention_output_cosine").holds()).isFalse();

        List<FigureChecks.Figure> high = FigureChecks.figures(run(new HighValueReadbackOps()), truth);
        assertThat(figure(high, "value_mse").holds()).as("%s", figure(high, "value_mse")).isFalse();
        assertThat(figure(high, "key_mse").holds()).isTrue();
    }
}
