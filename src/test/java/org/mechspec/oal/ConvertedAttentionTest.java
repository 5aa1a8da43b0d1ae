package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.model.AttentionBlock;
import org.mechspec.model.HeadLayout;
import org.mechspec.model.Parameter;
import org.mechspec.model.Precision;
import org.mechspec.model.Tensor;

/** ConvertedAttention's construction guards, its one parameter, copies and shape checks. */
@Tag("oal")
class ConvertedAttentionTest {

    private static ConvertedAttention block(int[] groups, double[][] l) {
        return new ConvertedAttention(4, CpuGroupedQuadraticAttention.INSTANCE, groups, 1, l);
    }

    @Test
    void groupIdsMustSplitOverAtLeastOneHead() {
        assertThatThrownBy(() -> block(new int[4], new double[0][]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("do not split over 0 heads");
        assertThatThrownBy(() -> block(new int[5], new double[][] {new double[4], new double[4]}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("5 group ids do not split over 2 heads");
    }

    /** G = 1 needs a 2×2 factor per head: 4 coefficients. */
    @Test
    void eachHeadNeedsASideBySideFactor() {
        assertThatThrownBy(() -> block(new int[4], new double[][] {new double[4], new double[3]}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("head 1 has 3 coefficients, G = 1 needs 4");
    }

    /** The single parameter holds both heads' factors in order, frozen; a copy keeps values and trainability. */
    @Test
    void factorIsTheOneParameterAndCopiesKeepIt() {
        ConvertedAttention b = block(new int[4], new double[][] {{1, 0, 2, 3}, {4, 0, 5, 6}});
        assertThat(b.parameters()).hasSize(1);
        Parameter p = b.parameters().get(0);
        assertThat(p.name()).isEqualTo("model.layers.4.self_attn.oal.coefficient_factor");
        assertThat(p.value().toDoubles()).containsExactly(1, 0, 2, 3, 4, 0, 5, 6);
        assertThat(p.trainable()).isFalse();

        b.factor().setTrainable(true);
        AttentionBlock c = b.copy();
        assertThat(c).isInstanceOf(ConvertedAttention.class).isNotSameAs(b);
        Parameter cp = c.parameters().get(0);
        assertThat(cp.trainable()).isTrue();
        assertThat(cp.value().toDoubles()).containsExactly(1, 0, 2, 3, 4, 0, 5, 6);
    }

    /** An output tensor of the wrong size is named by the layout's shape check (1 token, 2 heads of dim 2: 4). */
    @Test
    void forwardRejectsTensorsOfTheWrongSize() {
        ConvertedAttention b = block(new int[4], new double[][] {{1, 0, 0, 1}, {1, 0, 0, 1}});
        HeadLayout layout = new HeadLayout(1, 1, 2, 1, 2);
        Tensor q = Tensor.zeros(Precision.FP64, 4);
        Tensor kv = Tensor.zeros(Precision.FP64, 2);
        assertThatThrownBy(() -> b.forward(layout, q, kv, kv, Tensor.zeros(Precision.FP64, 3)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("the head layout needs 4 elements");
    }
}
