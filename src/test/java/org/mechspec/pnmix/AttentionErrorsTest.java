package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The online figures' accumulator: an attention output row of all zeros has no direction, so its cosine with the
 * other row is undefined (0/0); it must stop the run naming the row rather than turn the mean cosine into NaN.
 */
@Tag("pn-mix")
class AttentionErrorsTest {
    private static final double[] LOGITS = {0.0, 0.0};

    @Test
    void anAllZeroQuantizedOutputRowIsRejectedNamingTheRow() {
        AttentionErrors e = new AttentionErrors(2);
        assertThatThrownBy(() -> e.add(LOGITS, LOGITS, 0, 2, new double[] {3, 4}, new double[] {0, 0}, 0, 7, 1))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("attention output of query 7, head 1 is all zero: cosine similarity is undefined");
        assertThat(e.rows()).isZero();
    }

    @Test
    void anAllZeroReferenceOutputRowIsRejectedNamingTheRow() {
        AttentionErrors e = new AttentionErrors(2);
        assertThatThrownBy(() -> e.add(LOGITS, LOGITS, 0, 2, new double[] {0, 0}, new double[] {3, 4}, 0, 5, 3))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("attention output of query 5, head 3 is all zero: cosine similarity is undefined");
        assertThat(e.rows()).isZero();
    }

    @Test
    void rowsWithOneZeroElementAreFineAndAveraged() {
        // Outputs at an offset: ref (3, 0), quant (0, 4) then ref (3, 4), quant (3, 4): cosines 0 and 1, squared
        // errors 9 + 16 and 0 over 2 rows × 2 dims; equal logits, so KL 0.
        AttentionErrors e = new AttentionErrors(2);
        e.add(LOGITS, LOGITS, 0, 2, new double[] {9, 3, 0}, new double[] {9, 0, 4}, 1, 0, 0);
        e.add(LOGITS, LOGITS, 0, 2, new double[] {3, 4}, new double[] {3, 4}, 0, 1, 0);
        assertThat(e.rows()).isEqualTo(2);
        assertThat(e.meanCosine()).isEqualTo(0.5);
        assertThat(e.outputMse()).isEqualTo(25.0 / 4);
        assertThat(e.meanKl()).isZero();
    }
}
