package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.Rng;
import org.mechspec.model.Checkpoint;
import org.mechspec.model.DType;
import org.mechspec.model.HeadLayout;
import org.mechspec.model.Precision;
import org.mechspec.model.Qwen2Config;
import org.mechspec.model.Qwen2Model;
import org.mechspec.model.Tensor;

/** Bad input gets a clear exception naming the cause, never a NaN metric. */
@Tag("oal")
class OalInputErrorsTest {

    @Test
    void checkpointWithoutTheConvertedLayerIsRejected() {
        Qwen2Model fourLayers = TinyOal.model(1, 4);
        assertThatThrownBy(() -> OalProtocol.run(42, CpuBackend.INSTANCE, fourLayers, TinyOal.blocks(1, 32 * 30),
                TinyOal.blocks(2, 32 * 5)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("4 decoder layers").hasMessageContaining("converts layer 4");
    }

    @Test
    void savedCheckpointWithoutTheConvertedLayerIsRejectedAtLoad(@TempDir Path dir) throws IOException {
        Checkpoint.save(TinyOal.model(1, 4), dir, DType.F32);
        assertThatThrownBy(() -> OalFixture.load(dir, Map.of())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("converts layer 4, which it does not have");
        assertThatThrownBy(() -> OalFixture.load(dir, Map.of("model.safetensors", "00")))
                .hasMessageContaining("model.safetensors has SHA-256");
    }

    @Test
    void alreadyConvertedLayerIsRejected() {
        Qwen2Model m = TinyOal.model(1, 5);
        Rng rng = new Rng(1);
        m.setAttention(4, new ConvertedAttention(4, CpuGroupedQuadraticAttention.INSTANCE, TinyOal.groups(rng, 2, 16), 3,
                TinyOal.factors(rng, 2, 3, 0.1)));
        assertThatThrownBy(() -> OalProtocol.requireConvertible(m)).hasMessageContaining("not softmax attention");
    }

    @Test
    void headDimensionTheGroupingCannotSplitIsRejected() {
        assertThatThrownBy(() -> Grouping.requireSplittable(2)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("head dimension 2 cannot be split");
        // Through the protocol: hidden 8 over 4 heads gives head dimension 2.
        Qwen2Model tiny = Qwen2Model.initialized(new Qwen2Config(256, 8, 16, 5, 4, 2, 64, 10000.0, 1e-6, true),
                Precision.FP32, new Rng(2), 0.2);
        assertThatThrownBy(() -> OalProtocol.run(42, CpuBackend.INSTANCE, tiny, TinyOal.blocks(1, 32 * 30), TinyOal.blocks(2, 32 * 5)))
                .hasMessageContaining("head dimension 2 cannot be split");
    }

    @Test
    void blocksOfAnotherLengthAreRejected() {
        org.mechspec.data.TokenBlocks shortBlocks = org.mechspec.data.TokenBlocks.ofBytes(TinyOal.text(1, 31 * 30), 31);
        assertThatThrownBy(() -> OalProtocol.run(42, CpuBackend.INSTANCE, TinyOal.model(3, 5), shortBlocks, TinyOal.blocks(2, 32 * 5)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blocks of 32 tokens, got blocks of 31");
    }

    @Test
    void nonFiniteActivationsAreRejectedByName() {
        LayerSamples s = TinyOal.samples(3, 1, 4, 2, 1, 8, 1.0);
        Rng rng = new Rng(3);
        ConvertedAttention block = new ConvertedAttention(4, CpuGroupedQuadraticAttention.INSTANCE, TinyOal.groups(rng, 2, 8), 3,
                TinyOal.factors(rng, 2, 3, 0.1));
        double[] q = s.q().clone();
        q[5] = Double.NaN;
        HeadLayout layout = new HeadLayout(1, 4, 2, 1, 8);
        assertThatThrownBy(() -> block.forward(layout, Tensor.of(Precision.FP32, q, q.length),
                Tensor.of(Precision.FP32, s.k(), s.k().length), Tensor.of(Precision.FP32, s.v(), s.v().length),
                Tensor.zeros(Precision.FP32, q.length)))
                .hasMessageContaining("non-finite activation").hasMessageContaining("queries element 5");
        double[] c = new double[16];
        c[3] = Double.POSITIVE_INFINITY;
        assertThatThrownBy(() -> Grouping.assign(c, 1, 16)).hasMessageContaining("dimension 3");
    }

    @Test
    void nonFiniteWeightsStopTheProtocolWithANamedLayer() {
        Qwen2Model m = TinyOal.model(4, 5);
        m.parameter("model.layers.2.self_attn.v_proj.weight").value().set(0, Double.NaN);
        assertThatThrownBy(() -> OalProtocol.run(42, CpuBackend.INSTANCE, m, TinyOal.blocks(1, 32 * 30), TinyOal.blocks(2, 32 * 5)))
                .hasMessageContaining("non-finite");
    }

    @Test
    void nonPositiveDenominatorIsAClearError() {
        QuadraticAttentionShape s = new QuadraticAttentionShape(1, 3, 1, 1, 4, 1);
        double[] q = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
        double[] m = {-1, 0, 0, -1};
        assertThatThrownBy(() -> CpuGroupedQuadraticAttention.INSTANCE.dense(s, q, q, q, new int[4], m))
                .isInstanceOf(NonPositiveDenominatorException.class).hasMessageContaining("token 0, head 0");
        assertThatThrownBy(() -> CpuGroupedQuadraticAttention.INSTANCE.recurrent(s, q, q, q, new int[4], m))
                .isInstanceOf(NonPositiveDenominatorException.class);
    }

    @Test
    void groupIdsOutsideTheGroupCountAreRejected() {
        QuadraticAttentionShape s = new QuadraticAttentionShape(1, 2, 1, 1, 4, 1);
        double[] x = new double[8];
        assertThatThrownBy(() -> CpuGroupedQuadraticAttention.INSTANCE.dense(s, x, x, x, new int[] {0, 0, 1, 0}, new double[4]))
                .hasMessageContaining("groups[2] = 1");
    }
}
