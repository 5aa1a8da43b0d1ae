package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.compute.Rng;
import org.mechspec.spec.MissingDataSkips;
import org.junit.jupiter.api.extension.ExtendWith;

/** Small parts of the mechanism: key plans, saliency selection, the data reader, the layer's vocabulary. */
@ExtendWith(MissingDataSkips.class)
class PnMixPartsTest {

    @Test
    void uniformKeyWidthsAreOneToEightBits() {
        assertThat(KeyPlan.uniform(1).uniformBits()).isEqualTo(1);
        assertThat(KeyPlan.uniform(8).uniformBits()).isEqualTo(8);
        assertThatThrownBy(() -> KeyPlan.uniform(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("uniform key width must be 1..8 bits, got 0");
        assertThatThrownBy(() -> KeyPlan.uniform(9)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("got 9");
    }

    @Test
    void selectionKeepsTheLowerIndexOnTies() {
        // one head, four pairs; the top score is shared by pairs 1 and 3
        assertThat(PairSaliency.select(new double[] {1, 3, 2, 3}, 1, 4, 1)).isEqualTo(PnMixFixtures.mask(1, 4, 1));
        assertThat(PairSaliency.select(new double[] {1, 3, 2, 3}, 1, 4, 2)).isEqualTo(PnMixFixtures.mask(1, 4, 1, 3));
        assertThat(PairSaliency.select(new double[] {1, 3, 2, 3}, 1, 4, 3)).isEqualTo(PnMixFixtures.mask(1, 4, 1, 2, 3));
        // the first pair is the top one: nothing later may displace it
        assertThat(PairSaliency.select(new double[] {3, 2, 1, 0}, 1, 4, 1)).isEqualTo(PnMixFixtures.mask(1, 4, 0));
    }

    @Test
    void hamletServesUpToItsLengthAndNoMore() {
        // 179910 bytes (HamletTokens.SOURCE); absent data skips
        assertThat(HamletTokens.first(179910).bytes()).hasSize(179910);
        assertThatThrownBy(() -> HamletTokens.first(179911)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("has 179910 bytes, the protocol needs 179911");
    }

    @Test
    void tokensOutsideTheVocabularyAreRejected() {
        PnMixConfig c = new PnMixConfig(new PnMixConfig.Model(100, 16, 2, 1, 4, 10000.0, PairLayout.ADJACENT),
                new PnMixConfig.CachePolicy(1, 4, 4, 0.5, 3, 1, 2, 4, OneBitLevels.CONDITIONAL_MEANS), new PnMixConfig.Tokens(3, 0));
        RandomRopeLayer layer = new RandomRopeLayer(new Rng(1), c);
        assertThat(layer.project(new byte[] {0, 50, 99}).tokens()).isEqualTo(3);
        assertThatThrownBy(() -> layer.project(new byte[] {5, 100, 7})).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("token 100 at position 1 is outside the vocabulary of 100");
    }
}
