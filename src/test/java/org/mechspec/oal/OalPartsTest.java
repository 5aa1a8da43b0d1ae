package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.util.Arrays;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;
import org.mechspec.model.HeadLayout;
import org.mechspec.model.LayerActivations;
import org.mechspec.model.Lora;
import org.mechspec.model.Precision;
import org.mechspec.model.Qwen2Model;
import org.mechspec.model.Tensor;

/** Grouping, block roles, layer samples, the run's NLL figures and the protocol's small helpers, by hand. */
@Tag("oal")
class OalPartsTest {

    @Test
    void assignRejectsUnsplittableDimensionsAndWrongLengths() {
        assertThatThrownBy(() -> Grouping.assign(new double[] {1, 2}, 1, 2))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("head dimension 2 cannot be split");
        assertThatThrownBy(() -> Grouping.assign(new double[5], 1, 4))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("5 contributions for 1 heads of dim 4");
        Grouping.requireSplittable(3); // 1 outlier + 1 secondary leaves one dimension for group 0
    }

    /** The javadoc's order: 4 grouping, 4 calibration, 8 adaptation, 2 validation of one shuffle; 2 test of the next. */
    @Test
    void rolesAreConsecutiveSlicesOfTheTwoShuffles() {
        BlockRoles r = BlockRoles.draw(new Rng(5), 18, 2);
        Rng rng = new Rng(5);
        int[] v = rng.permutation(18);
        int[] t = rng.permutation(2);
        assertThat(r.grouping()).containsExactly(Arrays.copyOfRange(v, 0, 4));
        assertThat(r.calibration()).containsExactly(Arrays.copyOfRange(v, 4, 8));
        assertThat(r.adaptation()).containsExactly(Arrays.copyOfRange(v, 8, 16));
        assertThat(r.validation()).containsExactly(Arrays.copyOfRange(v, 16, 18));
        assertThat(r.test()).containsExactly(t);
        assertThatThrownBy(() -> BlockRoles.draw(new Rng(5), 17, 2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs 18 validation and 2 test blocks, the data has 17 and 2");
        assertThatThrownBy(() -> BlockRoles.draw(new Rng(5), 18, 1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("the data has 18 and 1");
    }

    private static LayerActivations activations(double[] q) {
        HeadLayout layout = new HeadLayout(1, 1, 1, 1, 2);
        Tensor x = Tensor.of(Precision.FP64, new double[] {1, 2}, 2);
        return new LayerActivations(layout, x, Tensor.of(Precision.FP64, q, 2), x, x, x, x);
    }

    @Test
    void nonFiniteActivationIsRejectedEvenAtElementZero() {
        assertThat(LayerSamples.of(activations(new double[] {3, 4})).q()).containsExactly(3, 4);
        assertThatThrownBy(() -> LayerSamples.of(activations(new double[] {Double.NaN, 4})))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("post-RoPE queries element 0 is NaN");
    }

    /** 2 blocks × 1 token × 1 head of dim 2: block 1 is the second half of every array. */
    @Test
    void blockSlicesTheSecondBlock() {
        LayerSamples s = new LayerSamples(2, 1, 1, 1, 2, new double[] {1, 2, 3, 4}, new double[] {5, 6, 7, 8},
                new double[] {9, 10, 11, 12}, new double[] {13, 14, 15, 16});
        LayerSamples b = s.block(1);
        assertThat(b.blocks()).isEqualTo(1);
        assertThat(b.q()).containsExactly(3, 4);
        assertThat(b.k()).containsExactly(7, 8);
        assertThat(b.v()).containsExactly(11, 12);
        assertThat(b.softmax()).containsExactly(15, 16);
    }

    /** Token NLLs {1, 2, 3, 6} average to 3 (ppl e³); {0.5, 1.5} to 1. */
    @Test
    void runNllAndPplAreMeansAndTheirExponentials() {
        OalRun.Evaluation r = new OalRun.Evaluation(new double[] {1, 2, 3, 6}, new double[] {0.5, 1.5}, 0, 0);
        assertThat(r.softmaxNll()).isEqualTo(3.0);
        assertThat(r.oalNll()).isEqualTo(1.0);
        assertThat(r.softmaxPpl()).isCloseTo(Math.exp(3), within(1e-12));
        assertThat(r.oalPpl()).isCloseTo(Math.E, within(1e-12));
    }

    /**
     * L = 0 makes every similarity ε, so the output of token t is the plain mean of v_0..v_t: with v = (2, 4), (6, 0)
     * the outputs are (2, 4), (4, 2); against softmax (1, 1), (1, 1) the MSE is (1 + 9 + 9 + 1)/4 = 5. 1e-9 absolute.
     */
    @Test
    void outputMseOfUniformAttentionIsHandComputed() {
        LayerSamples s = new LayerSamples(1, 2, 1, 1, 2, new double[] {1, 0, 0, 1}, new double[] {0, 1, 1, 0},
                new double[] {2, 4, 6, 0}, new double[] {1, 1, 1, 1});
        double mse = OalProtocol.outputMse(CpuGroupedQuadraticAttention.INSTANCE, s, new int[2], 1, new double[][] {new double[4]});
        assertThat(mse).isCloseTo(5.0, within(1e-9));
    }

    @Test
    void convertibleCheckNamesLayersAndExistingAdapters() {
        assertThatThrownBy(() -> OalProtocol.requireConvertible(TinyOal.model(1, 4)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("4 decoder layers (0..3)");
        Qwen2Model withLora = TinyOal.model(1, 5);
        Lora.attach(withLora, OalProtocol.LORA, new Rng(1));
        assertThatThrownBy(() -> OalProtocol.requireConvertible(withLora))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("already carries LoRA adapters");
    }
}
