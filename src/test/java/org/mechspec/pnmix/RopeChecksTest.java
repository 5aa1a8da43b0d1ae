package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.spec.Breaks;

/**
 * RopeChecks' deviations and bounds on hand-built vectors, d = 4 with θ = 16 so that ω = (1, 1/4) exactly: the
 * stated bounds are recomputed here from the class comment's formulas, and one broken element is found.
 */
@Tag("pn-mix")
class RopeChecksTest {
    private static final double U = 0x1.0p-53;
    private static final double THETA = 16;

    @Test
    void aDeviationExactlyAtItsBoundHolds() {
        assertThat(new RopeChecks.Deviation(0, 1.0).holds()).isTrue();
        assertThat(new RopeChecks.Deviation(0, Math.nextUp(1.0)).holds()).isFalse();
        // A zero pair has bound 0 and no error: over-bound 0 (not 0/0).
        RopeChecks.Deviation zero = new RopeChecks.Deviation(0, 0).max(0, 0);
        assertThat(zero.maxOverBound()).isZero();
        assertThat(zero.holds()).isTrue();
    }

    @Test
    void rotationBoundIs16uTimesOnePlusAngleTimesPairNorm() {
        // Two tokens at positions 0, 1; one head (1, 0, 3, 4): pair 1 = (3, 4), norm 5, ω_1 = 1/4.
        double[] pre = {1, 0, 3, 4, 1, 0, 3, 4};
        double[] rope = new double[8];
        for (int t = 0; t < 2; t++) {
            for (int i = 0; i < 2; i++) {
                double w = i == 0 ? 1 : 0.25;
                double c = StrictMath.cos(t * w);
                double s = StrictMath.sin(t * w);
                double x = pre[4 * t + 2 * i];
                double y = pre[4 * t + 2 * i + 1];
                rope[4 * t + 2 * i] = x * c - y * s;
                rope[4 * t + 2 * i + 1] = x * s + y * c;
            }
        }
        assertThat(RopeChecks.rotation(pre, rope, 2, 1, 4, THETA, PairLayout.ADJACENT).maxOverBound()).isZero();
        // Pair 1 of token 1 off by e = 2^-20 (exact: the element is in [1, 2)). Bound 16u·(1 + 1·1/4)·5 = 100u.
        rope[6] += 0x1.0p-20;
        RopeChecks.Deviation dev = RopeChecks.rotation(pre, rope, 2, 1, 4, THETA, PairLayout.ADJACENT);
        assertThat(dev.maxError()).isEqualTo(0x1.0p-20);
        double want = 0x1.0p-20 / (100 * U);
        assertThat(dev.maxOverBound()).isCloseTo(want, within(1e-12 * want));
    }

    @Test
    void dotBoundFollowsTheStatedFormula() {
        // a = (3, 4, 0, 2): pair norms 5, 2; b = (0, 2, 6, 8): 2, 10. m = 3, n = 1: m + n + |m − n| = 6.
        // Σ ‖a_i‖‖b_i‖·(16·(3 + 6ω_i) + 4d) = 10·(16·9 + 16) + 20·(16·4.5 + 16) = 1600 + 1760 = 3360.
        // "Rotated" vectors left unrotated, so the dot is off the closed form by a finite error.
        double[] a = {3, 4, 0, 2};
        double[] b = {0, 2, 6, 8};
        for (int[] mn : new int[][] {{3, 1}, {1, 3}}) {
            RopeChecks.Deviation dev = RopeChecks.dot(a, a, b, b, mn[0], mn[1], THETA, PairLayout.ADJACENT);
            assertThat(dev.maxError()).isGreaterThan(1.0);
            double bound = dev.maxError() / dev.maxOverBound();
            assertThat(bound).as("m=%d n=%d", mn[0], mn[1]).isCloseTo(3360 * U, within(1e-12 * 3360 * U));
        }
    }

    @Test
    void relativePositionBoundFollowsTheStatedFormula() {
        // Three tokens, one head each, d = 4. Only the query at m = 2 and the key at n = 1 are nonzero, so only that
        // (m, n) has a bound: m + n + (m − n) = 4; Σ ‖q_i‖‖k_i‖·(16·(3 + 4ω_i) + 16) = 10·128 + 20·80 = 2880.
        double[] q = {0, 0, 0, 0, 0, 0, 0, 0, 3, 4, 0, 2};
        double[] k = {0, 0, 0, 0, 0, 2, 6, 8, 0, 0, 0, 0};
        Projections p = new Projections(3, 1, 1, 4, q, k, q, k, q, k, k);
        RopeChecks.Deviation dev = RopeChecks.relativePosition(p, THETA, PairLayout.ADJACENT);
        assertThat(dev.maxError()).isGreaterThan(1.0);
        assertThat(dev.maxError() / dev.maxOverBound()).isCloseTo(2880 * U, within(1e-12 * 2880 * U));
    }

    /** One token's rows of a small truth with 4 query heads over 2 KV heads. */
    private final PnMixConfig c = PnMixFixtures.small(4, 2, 8, 2, 4, 6, 0, 3, 1, 2);
    private final Projections truth = PnMixFixtures.syntheticTruth(c, 3, PairLayout.ADJACENT);

    private Projections withRope(double[] qRope, double[] kRope) {
        Projections p = truth;
        return new Projections(p.tokens(), p.queryHeads(), p.kvHeads(), p.headDim(), p.qPreRope(), p.kPreRope(), qRope, kRope,
                p.q(), p.k(), p.v());
    }

    @Test
    @Breaks(paper = "pn-mix", check = "rope_relative_position")
    void relativePositionSeesTheSecondKvHeadAndTheDiagonal() {
        assertThat(RopeChecks.relativePosition(truth, c.model().ropeTheta(), PairLayout.ADJACENT).holds()).isTrue();
        // KV head 1 of token 3 off: only query heads 2 and 3 attend to it.
        double[] kr = truth.kRope().clone();
        kr[3 * truth.kvWidth() + 8 + 1] += 0.5;
        assertThat(RopeChecks.relativePosition(withRope(truth.qRope(), kr), c.model().ropeTheta(), PairLayout.ADJACENT).holds()).isFalse();
        // The query of token 0 off: only the pair (m, n) = (0, 0) sees it.
        double[] qr = truth.qRope().clone();
        qr[1] += 0.5;
        assertThat(RopeChecks.relativePosition(withRope(qr, truth.kRope()), c.model().ropeTheta(), PairLayout.ADJACENT).holds()).isFalse();
    }

    @Test
    void fp16MismatchesOfQueriesAndKeysAddUp() {
        double[] wide = {0.1, 0.2};
        double[] good = {org.mechspec.compute.HalfFloat.roundToHalf(0.1), org.mechspec.compute.HalfFloat.roundToHalf(0.2)};
        double[] bad = {good[0], 0.2};
        Projections p = new Projections(1, 1, 1, 2, wide, wide, wide, wide, bad, bad, good);
        assertThat(RopeChecks.fp16TruthMismatches(p)).isEqualTo(2);
    }
}
