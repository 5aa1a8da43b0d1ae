package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;
import org.mechspec.spec.Breaks;

/** StreamChecks' counts on a small layer: one wrong element or one missing token counts exactly once. */
@Tag("pn-mix")
class StreamChecksTest {
    private static final long SEED = 11;
    private final PnMixConfig c = PnMixFixtures.small(2, 1, 4, 1, 2, 4, 0, 3, 1, 2);
    private final byte[] tokens = PnMixFixtures.syntheticTokens(SEED + 1, c.totalTokens());
    private final Projections p = new RandomRopeLayer(new Rng(SEED), c).project(tokens);

    private Projections with(double[] qPre, double[] kPre) {
        return new Projections(p.tokens(), p.queryHeads(), p.kvHeads(), p.headDim(), qPre, kPre, p.qRope(), p.kRope(), p.q(), p.k(),
                p.v());
    }

    @Test
    @Breaks(paper = "pn-mix", check = "layer_projections_match_definition")
    void oneWrongQueryOrKeyElementOrOneMissingTokenCountsOnce() {
        assertThat(StreamChecks.projectionMismatches(p, tokens, SEED, c)).isZero();
        double[] q = p.qPreRope().clone();
        q[5] = Math.nextUp(q[5]);
        assertThat(StreamChecks.projectionMismatches(with(q, p.kPreRope()), tokens, SEED, c)).isEqualTo(1);
        double[] k = p.kPreRope().clone();
        k[2] = Math.nextUp(k[2]);
        assertThat(StreamChecks.projectionMismatches(with(p.qPreRope(), k), tokens, SEED, c)).isEqualTo(1);
        // One token fewer than the projections hold: its rows are not compared, the count difference is.
        assertThat(StreamChecks.projectionMismatches(p, Arrays.copyOf(tokens, tokens.length - 1), SEED, c)).isEqualTo(1);
    }

    @Test
    void aMaskOfTheWrongShapeIsMaximallyWrong() {
        PairMask twoHeads = PairMask.of(2, c.model().pairs(), new boolean[2 * c.model().pairs()]);
        assertThat(StreamChecks.randomMaskMismatches(new PairMask[] {twoHeads}, SEED, c)).isEqualTo(Long.MAX_VALUE);
    }
}
