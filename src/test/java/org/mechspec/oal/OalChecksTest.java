package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;
import org.mechspec.oal.BlockLedger.Phase;
import org.mechspec.oal.BlockLedger.Split;
import org.mechspec.spec.Breaks;
import org.mechspec.spec.Manifest;

/** The OAL predicates on hand-made inputs: thresholds met exactly, one thing broken at a time. */
@Tag("oal")
class OalChecksTest {

    // ------------------------------------------------------------ thresholds (≤ passes at equality)

    @Test
    void formsAgreeAtExactlyTheTolerancesAndNotJustAbove() {
        assertThat(OalChecks.formsAgree(new KernelAgreement(1e-5, 1e-12, 1e-12), 1e-5, 1e-12)).isTrue();
        assertThat(OalChecks.formsAgree(new KernelAgreement(Math.nextUp(1e-5), 1e-12, 1e-12), 1e-5, 1e-12)).isFalse();
        assertThat(OalChecks.formsAgree(new KernelAgreement(1e-5, Math.nextUp(1e-12), 1e-12), 1e-5, 1e-12)).isFalse();
        assertThat(OalChecks.formsAgree(new KernelAgreement(1e-5, 1e-12, Math.nextUp(1e-12)), 1e-5, 1e-12)).isFalse();
    }

    @Test
    void kernelPositiveFromHalfEpsilonOn() {
        double half = GroupedQuadraticAttentionOps.EPSILON / 2;
        assertThat(OalChecks.kernelPositive(half)).isTrue();
        assertThat(OalChecks.kernelPositive(Math.nextDown(half))).isFalse();
    }

    @Test
    void gradientMatchesAtExactlyTheThreshold() {
        assertThat(OalChecks.gradientMatches(1e-6, 1e-6)).isTrue();
        assertThat(OalChecks.gradientMatches(Math.nextUp(1e-6), 1e-6)).isFalse();
    }

    // ------------------------------------------------------------ guard

    /**
     * One head, d = 3 (one dimension per group), q_t = (0, 0, 3), k_j = (0, 0, −3): the group-2 feature is
     * z = −9/√3 for every pair. M = −I gives sim = ε − (1 + z²) < 0, so the guard must fire; an M with −1 anywhere
     * but the diagonal (e.g. on the first row: sim = ε − (1 + z) > 0) would not.
     */
    @Test
    void guardFiresForMinusIdentityOnPairsWhereOnlyTheDiagonalIsNegative() {
        double[] q = {0, 0, 3, 0, 0, 3};
        double[] k = {0, 0, -3, 0, 0, -3};
        LayerSamples s = new LayerSamples(1, 2, 1, 1, 3, q, k, new double[] {1, 2, 3, 4, 5, 6}, new double[6]);
        assertThat(OalChecks.guardRejectsNonPositive(CpuGroupedQuadraticAttention.INSTANCE, s, new int[] {0, 1, 2}, 3)).isTrue();
    }

    /** A device that never checks its denominators: the guard check reports false. */
    @Test
    @Breaks(paper = "oal", check = "kernel_positive_for_any_coefficients")
    void guardCheckFailsForADeviceWithoutTheGuard() {
        GroupedQuadraticAttentionOps unguarded = new GroupedQuadraticAttentionOps() {
            @Override
            public String name() {
                return "unguarded";
            }

            @Override
            public double[] dense(QuadraticAttentionShape sh, double[] q, double[] k, double[] v, int[] g, double[] m) {
                return new double[q.length];
            }

            @Override
            public float[] dense(QuadraticAttentionShape sh, float[] q, float[] k, float[] v, int[] g, float[] m) {
                return new float[q.length];
            }

            @Override
            public double[] recurrent(QuadraticAttentionShape sh, double[] q, double[] k, double[] v, int[] g, double[] m) {
                return new double[q.length];
            }

            @Override
            public float[] recurrent(QuadraticAttentionShape sh, float[] q, float[] k, float[] v, int[] g, float[] m) {
                return new float[q.length];
            }
        };
        LayerSamples s = TinyOal.samples(3, 1, 2, 2, 1, 3, 0.8);
        assertThat(OalChecks.guardRejectsNonPositive(unguarded, s, new int[] {1, 2, 0, 1, 2, 0}, 3)).isFalse();
    }

    // ------------------------------------------------------------ grouping rule, d = 3: one outlier, one secondary, one rest

    @Test
    void groupingRuleAcceptsEachHeadsOwnOrder() {
        double[] c = {0.9, 0.5, 0.1, 0.1, 0.5, 0.9};
        assertThat(OalChecks.groupingFollowsRule(c, new int[] {1, 2, 0, 0, 2, 1}, 2, 3)).isTrue();
    }

    /** Head 1 has two outliers although its order is consistent: only its own count catches it. */
    @Test
    void groupingRuleCountsEachHeadSeparately() {
        double[] c = {0.9, 0.5, 0.1, 0.9, 0.5, 0.1};
        assertThat(OalChecks.groupingFollowsRule(c, new int[] {1, 2, 0, 1, 1, 0}, 2, 3)).isFalse();
    }

    @Test
    void groupingRuleRejectsGroupsOutsideTheRange() {
        double[] c = {0.9, 0.5, 0.1};
        assertThat(OalChecks.groupingFollowsRule(c, new int[] {1, 2, 3}, 1, 3)).isFalse();
        assertThat(OalChecks.groupingFollowsRule(c, new int[] {1, 2, -1}, 1, 3)).isFalse();
    }

    @Test
    void groupingRuleRejectsAMissingSecondaryGroup() {
        assertThat(OalChecks.groupingFollowsRule(new double[] {0.9, 0.5, 0.1}, new int[] {1, 0, 0}, 1, 3)).isFalse();
    }

    /** Equal contributions: the lower index must take the earlier group. */
    @Test
    void groupingRuleBreaksTiesByLowerIndex() {
        double[] c = {0.5, 0.5, 0.5};
        assertThat(OalChecks.groupingFollowsRule(c, new int[] {1, 2, 0}, 1, 3)).isTrue();
        assertThat(OalChecks.groupingFollowsRule(c, new int[] {0, 2, 1}, 1, 3)).isFalse();
    }

    // ------------------------------------------------------------ test isolation

    private static BlockRoles roles(int[] grouping, int[] calibration, int[] test) {
        return new BlockRoles(grouping, calibration, new int[] {8, 9, 10, 11, 12, 13, 14, 15}, new int[] {16, 17}, test);
    }

    private static BlockLedger ledger(int[] evaluated) {
        BlockLedger l = new BlockLedger();
        l.record(Phase.GROUPING, Split.VALIDATION, new int[] {0, 1, 2, 3});
        l.record(Phase.CALIBRATION, Split.VALIDATION, new int[] {4, 5, 6, 7});
        l.record(Phase.EVALUATION, Split.TEST, evaluated);
        return l;
    }

    private static final int[] GROUPING = {0, 1, 2, 3};
    private static final int[] CALIBRATION = {4, 5, 6, 7};

    @Test
    void testIsolatedHoldsForDisjointPinnedRoles() {
        assertThat(OalChecks.testIsolated(roles(GROUPING, CALIBRATION, new int[] {0, 1}), ledger(new int[] {0, 1}))).isTrue();
    }

    @Test
    void testIsolatedFailsForAWrongRoleSize() {
        assertThat(OalChecks.testIsolated(roles(new int[] {0, 1, 2}, CALIBRATION, new int[] {0, 1}), ledger(new int[] {0, 1})))
                .isFalse();
    }

    @Test
    void testIsolatedFailsForABlockInTwoRoles() {
        assertThat(OalChecks.testIsolated(roles(GROUPING, new int[] {3, 5, 6, 7}, new int[] {0, 1}), ledger(new int[] {0, 1})))
                .isFalse();
    }

    @Test
    void testIsolatedFailsForWrongOrRepeatedTestBlocks() {
        assertThat(OalChecks.testIsolated(roles(GROUPING, CALIBRATION, new int[] {0, 0}), ledger(new int[] {0}))).isFalse();
        assertThat(OalChecks.testIsolated(roles(GROUPING, CALIBRATION, new int[] {0, 1, 2}), ledger(new int[] {0, 1})))
                .isFalse();
    }

    @Test
    void testIsolatedFailsWhenEvaluationReadsANonTestBlock() {
        assertThat(OalChecks.testIsolated(roles(GROUPING, CALIBRATION, new int[] {0, 1}), ledger(new int[] {0, 5}))).isFalse();
    }

    // ------------------------------------------------------------ sentences

    private static final String TEMPLATE = "seed {seed}: {lhs} is not below {rhs}";

    @Test
    void sentenceStatesMatchesSeedAndBothValues() {
        assertThat(OalChecks.sentenceStates(TEMPLATE, "seed 7: 2.5 is not below 1.25", 7, 2.5, 1.25)).isTrue();
        assertThat(OalChecks.sentenceStates(TEMPLATE, "seed 7: 2.6 is not below 1.25", 7, 2.5, 1.25)).isFalse();
        assertThat(OalChecks.sentenceStates(TEMPLATE, "seed 8: 2.5 is not below 1.25", 7, 2.5, 1.25)).isFalse();
        assertThat(OalChecks.sentenceStates(TEMPLATE, "seed 7: + is not below 1.25", 7, 2.5, 1.25)).isFalse();
    }

    /** |stated − actual| ≤ 1e-9·max(1, |actual|): with actual 0 the tolerance is exactly the double 1e-9. */
    @Test
    void sentenceStatesToleranceIsInclusive() {
        assertThat(OalChecks.sentenceStates(TEMPLATE, "seed 1: 1.0E-9 is not below 2", 1, 0.0, 2.0)).isTrue();
        String above = "seed 1: " + Math.nextUp(1e-9) + " is not below 2";
        assertThat(OalChecks.sentenceStates(TEMPLATE, above, 1, 0.0, 2.0)).isFalse();
    }

    @Test
    void sentenceStatesNeedsSeedLhsAndRhsInTheTemplate() {
        assertThat(OalChecks.sentenceStates("{lhs} is not below {rhs}", "2.5 is not below 1.25", 7, 2.5, 1.25)).isFalse();
        assertThat(OalChecks.sentenceStates("seed {seed}: {lhs}", "seed 7: 2.5", 7, 2.5, 1.25)).isFalse();
    }

    // ------------------------------------------------------------ negative results and the claims judge

    static Manifest manifest() {
        return new Manifest(null, null, null, null, List.of(), Map.of(), Map.of(),
                List.of(new Manifest.Hypothesis("a", "b", TEMPLATE)), "", List.of(), null, List.of(), null, null);
    }

    /** Seed 1 contradicts a < b (2 ≥ 1), seed 2 supports it. */
    private static final Map<Long, Map<String, Object>> TABLE = Map.of(1L, Map.of("a", 2.0, "b", 1.0), 2L, Map.of("a", 0.5, "b", 1.0));
    private static final String SEED1 = "seed 1: 2.0000000000 is not below 1.0000000000";

    @Test
    void negativeResultsCompleteWithExactlyTheContradictingSentence() {
        assertThat(OalChecks.negativeResultsComplete(manifest(), TABLE, new OalClaims.Verdict(List.of(SEED1), false))).isTrue();
    }

    @Test
    void negativeResultsIncompleteWhenASentenceIsMissingExtraOrTheClaimWrong() {
        assertThat(OalChecks.negativeResultsComplete(manifest(), TABLE, new OalClaims.Verdict(List.of(), false))).isFalse();
        assertThat(OalChecks.negativeResultsComplete(manifest(), TABLE,
                new OalClaims.Verdict(List.of(SEED1, "seed 2: 0.5 is not below 1"), false))).isFalse();
        assertThat(OalChecks.negativeResultsComplete(manifest(), TABLE, new OalClaims.Verdict(List.of(SEED1), true))).isFalse();
    }

    /** The seed-mean judge states the means: a = (3 + 5)/2 = 4, b = 1, under the first seed. */
    @Test
    void seedMeanJudgeStatesTheMeanOverSeeds() {
        Map<Long, Map<String, Object>> table = new java.util.LinkedHashMap<>();
        table.put(1L, Map.of("a", 3.0, "b", 1.0));
        table.put(2L, Map.of("a", 5.0, "b", 1.0));
        OalClaims.Verdict v = OalClaims.judgeOnSeedMean(manifest(), table);
        assertThat(v.sentences()).containsExactly("seed 1: 4.0000000000 is not below 1.0000000000");
        assertThat(v.claimsImprovement()).isFalse();
    }

    // ------------------------------------------------------------ differential inputs

    /** The grouping of a differential case follows the rule for the contributions drawn after q, k, v from Rng(seed). */
    @Test
    void differentialCaseGroupsTheContributionsItDrew() {
        long seed = 11;
        OalChecks.DifferentialCase c = OalChecks.differentialCase(seed, 1, 3, 2, 1, 16);
        Rng rng = new Rng(seed);
        rng.normals(c.shape().queryElements(), 0, 1);
        rng.normals(c.shape().keyElements(), 0, 1);
        rng.normals(c.shape().keyElements(), 0, 1);
        double[] contributions = new double[2 * 16];
        for (int i = 0; i < contributions.length; i++) {
            contributions[i] = rng.uniform();
        }
        assertThat(OalChecks.groupingFollowsRule(contributions, c.groups(), 2, 16)).isTrue();
    }
}
