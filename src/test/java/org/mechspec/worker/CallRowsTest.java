package org.mechspec.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Two-dimensional inputs and outputs as rows: row-major on the wire, shapes checked both ways. */
@Tag("worker")
class CallRowsTest {
    @Test
    void rowsGoOnTheWireRowMajorAndARaggedRowIsRefused() {
        Call call = new Call(null, "paper.op", Operations.F64).input("x", new double[][] {{1, 2, 3}, {4, 5, 6}});
        assertThat(call.inputs.get("x").shape()).containsExactly(2, 3);
        assertThat(call.inputs.get("x").f64()).containsExactly(1, 2, 3, 4, 5, 6);
        assertThat(new Call(null, "paper.op", Operations.F64).input("x", new double[0][]).inputs.get("x").shape()).containsExactly(0, 0);
        assertThatThrownBy(() -> new Call(null, "paper.op", Operations.F64).input("x", new double[][] {{1, 2}, {3}}))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("paper.op: input 'x' row 1 has 1 numbers, row 0 has 2");
    }

    @Test
    void outputsComeBackAsTheirShapesRowsAndOnlyTwoDimensionalOnesDo() {
        Call.Reply reply = new Call.Reply(Map.of("y", WireTensor.of(new double[] {1, 2, 3, 4, 5, 6}, 3, 2),
                "held", WireTensor.of(new int[] {1, 0, 0, 1}, 2, 2), "empty", WireTensor.of(new double[0], 4, 0),
                "flat", WireTensor.of(new double[] {1, 2}, 2)));
        assertThat(reply.f64Rows("y")).isDeepEqualTo(new double[][] {{1, 2}, {3, 4}, {5, 6}});
        assertThat(reply.i32Rows("held")).isDeepEqualTo(new int[][] {{1, 0}, {0, 1}});
        assertThat(reply.f64Rows("empty")).hasDimensions(4, 0);
        assertThatThrownBy(() -> reply.f64Rows("flat")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("output 'flat' has shape [2], not two dimensions");
    }
}
