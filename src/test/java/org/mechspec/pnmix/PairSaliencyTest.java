package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * PairSaliency on hand-written projections whose pair norms are small integers, so every score is exact:
 * score(h, p) = mean_t ‖k_t,h,p‖ × mean_{t, query heads of h} ‖q_t,p‖ (protocols.md, pn-mix). A check that only compares the
 * selected masks cannot see a wrong normalisation (it rescales every score alike), so the scores are compared here.
 */
@Tag("pn-mix")
class PairSaliencyTest {

    /** A pair (norm, 0), or (3, 4) for norm 5 so that both channels of a pair count. */
    private static void pair(double[] x, int at, int norm) {
        if (norm == 5) {
            x[at] = 3;
            x[at + 1] = 4;
        } else {
            x[at] = norm;
            x[at + 1] = 0;
        }
    }

    /**
     * 3 tokens, 4 query heads over 2 KV heads (groups of 2), headDim 4 (2 adjacent pairs). Pair norms
     * [token][head][pair]; token 0 is 100 everywhere and lies outside the range [1, 3) the scores are taken over.
     */
    private static Projections threeTokens() {
        int[][][] kNorm = {
                {{100, 100}, {100, 100}},
                {{1, 2}, {5, 0}},
                {{3, 4}, {5, 2}},
        };
        int[][][] qNorm = {
                {{100, 100}, {100, 100}, {100, 100}, {100, 100}},
                {{1, 2}, {1, 0}, {1, 4}, {0, 4}},
                {{1, 2}, {5, 4}, {0, 4}, {1, 4}},
        };
        double[] k = new double[3 * 2 * 4];
        double[] q = new double[3 * 4 * 4];
        for (int t = 0; t < 3; t++) {
            for (int h = 0; h < 2; h++) {
                for (int p = 0; p < 2; p++) {
                    pair(k, t * 8 + h * 4 + 2 * p, kNorm[t][h][p]);
                }
            }
            for (int h = 0; h < 4; h++) {
                for (int p = 0; p < 2; p++) {
                    pair(q, t * 16 + h * 4 + 2 * p, qNorm[t][h][p]);
                }
            }
        }
        double[] none = new double[0];
        return new Projections(3, 4, 2, 4, none, none, none, none, q, k, new double[k.length]);
    }

    /** One token, one head of d = 2: k = (3, 4), q = (0, 2); the only score is 5 × 2 = 10. */
    private static Projections oneToken() {
        double[] none = new double[0];
        return new Projections(1, 1, 1, 2, none, none, none, none, new double[] {0, 2}, new double[] {3, 4}, new double[2]);
    }

    @Test
    void scoresAreTheProductOfTheMeanKeyAndMeanQueryPairNormsOverTheRange() {
        // Over tokens 1, 2 (n = 2) and the group's 2 query heads (n·group = 4 query norms per pair):
        // h0 p0: k (1, 3) → 2; q (1, 1, 1, 5) → 2; score 4.
        // h0 p1: k (2, 4) → 3; q (2, 0, 2, 4) → 2; score 6.
        // h1 p0: k (5, 5) → 5; q (1, 0, 0, 1) → 0.5; score 2.5.
        // h1 p1: k (0, 2) → 1; q (4, 4, 4, 4) → 4; score 4.
        // Dividing by to + from, by n·n, by n/group or not at all, or dividing the two means, each gives other numbers.
        assertThat(PairSaliency.scores(threeTokens(), 1, 3, PairLayout.ADJACENT)).containsExactly(4, 6, 2.5, 4);
    }

    @Test
    void aRangeFromTheFirstToTheLastTokenIsAccepted() {
        // from = 0, to = tokens, from = to − 1: all three bounds of the range check met exactly.
        assertThat(PairSaliency.scores(oneToken(), 0, 1, PairLayout.ADJACENT)).containsExactly(10);
        // The middle token alone of the three: n = 1, so the scores are that token's norm products.
        // h0 p0: 1 × (1 + 1)/2 = 1; h0 p1: 2 × (2 + 0)/2 = 2; h1 p0: 5 × (1 + 0)/2 = 2.5; h1 p1: 0.
        assertThat(PairSaliency.scores(threeTokens(), 1, 2, PairLayout.ADJACENT)).containsExactly(1, 2, 2.5, 0);
        // ... and the last one, with to = tokens: h0 p0: 3 × 3; h0 p1: 4 × 3; h1 p0: 5 × 0.5; h1 p1: 2 × 4.
        assertThat(PairSaliency.scores(threeTokens(), 2, 3, PairLayout.ADJACENT)).containsExactly(9, 12, 2.5, 8);
    }

    @Test
    void anEmptyOrOutOfBoundsRangeIsRejectedWithItsBounds() {
        Projections p = oneToken();
        assertThatThrownBy(() -> PairSaliency.scores(p, -1, 1, PairLayout.ADJACENT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("saliency needs tokens: range [-1, 1) of 1");
        assertThatThrownBy(() -> PairSaliency.scores(p, 0, 2, PairLayout.ADJACENT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("saliency needs tokens: range [0, 2) of 1");
        // An empty range has no mean (0/0): it must be refused, not turned into NaN scores.
        assertThatThrownBy(() -> PairSaliency.scores(p, 0, 0, PairLayout.ADJACENT)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("saliency needs tokens: range [0, 0) of 1");
        assertThatThrownBy(() -> PairSaliency.scores(threeTokens(), 2, 2, PairLayout.ADJACENT))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("saliency needs tokens: range [2, 2) of 3");
        assertThatThrownBy(() -> PairSaliency.scores(threeTokens(), 2, 1, PairLayout.ADJACENT))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("saliency needs tokens: range [2, 1) of 3");
    }

    @Test
    void noneOrAllPairsMayBeHigh() {
        double[] scores = {3, 1, 2, 1};
        assertThat(PairSaliency.select(scores, 1, 4, 0)).isEqualTo(PnMixFixtures.mask(1, 4));
        assertThat(PairSaliency.select(scores, 1, 4, 4)).isEqualTo(PnMixFixtures.mask(1, 4, 0, 1, 2, 3));
    }

    @Test
    void aHighPairCountOutside0ToPairsIsRejectedWithItsRange() {
        double[] scores = {3, 1, 2, 1};
        assertThatThrownBy(() -> PairSaliency.select(scores, 1, 4, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("high pairs per head must be 0..4, got -1");
        assertThatThrownBy(() -> PairSaliency.select(scores, 1, 4, 5)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("high pairs per head must be 0..4, got 5");
    }
}
