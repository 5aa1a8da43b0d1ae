package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mechspec.spec.Properties.qt;
import static org.quicktheories.generators.SourceDSL.integers;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.Rng;

/** The attention core against the platform's independent fp64 oracle, and RoPE's defining properties. */
@Tag("model")
class AttentionAndRopeTest {

    @Test
    void softmaxAttentionMatchesTheCpuBackendOracle() {
        qt().withExamples(20).forAll(integers().between(1, 3), integers().between(1, 9), integers().between(1, 3),
                integers().between(1, 1000)).checkAssert((batch, seq, groups, seed) -> {
                    int kvHeads = 2;
                    int heads = kvHeads * groups;
                    int d = 8;
                    HeadLayout layout = new HeadLayout(batch, seq, heads, kvHeads, d);
                    Rng rng = new Rng(seed);
                    Tensor q = random(rng, layout.tokens() * heads * d);
                    Tensor k = random(rng, layout.tokens() * kvHeads * d);
                    Tensor v = random(rng, layout.tokens() * kvHeads * d);
                    Tensor out = Tensor.zeros(Precision.FP64, layout.tokens() * heads * d);
                    new SoftmaxAttention().forward(layout, q, k, v, out);
                    AttentionShape shape = AttentionShape.of(batch, heads, kvHeads, seq, seq, d, d, true);
                    double[] oracle = CpuBackend.INSTANCE.attention(shape, headMajor(q, layout, heads),
                            headMajor(k, layout, kvHeads), headMajor(v, layout, kvHeads), null);
                    double[] ours = headMajor(out, layout, heads);
                    for (int i = 0; i < ours.length; i++) {
                        assertThat(ours[i]).isCloseTo(oracle[i], org.assertj.core.data.Offset.offset(1e-13));
                    }
                });
    }

    @Test
    void ropeHalfSplitPairsDimensionIWithIPlusHalf() {
        int d = 8;
        HalfSplitRope rope = new HalfSplitRope(d, 16, 10000.0);
        Tensor x = Tensor.zeros(Precision.FP64, 16, d);
        for (int t = 0; t < 16; t++) {
            x.set(t * d + 1, 1.0); // unit vector on dimension 1 at every position
        }
        rope.rotate(x, 1, 16, 1, 1);
        double omega1 = Math.pow(10000.0, -2.0 / d);
        for (int t = 0; t < 16; t++) {
            assertThat(x.get(t * d + 1)).isCloseTo(Math.cos(t * omega1), org.assertj.core.data.Offset.offset(1e-15));
            assertThat(x.get(t * d + 1 + d / 2)).isCloseTo(Math.sin(t * omega1), org.assertj.core.data.Offset.offset(1e-15));
            assertThat(x.get(t * d + 2)).isZero();
        }
    }

    @Test
    void ropeScoresDependOnlyOnRelativePositionAndInverseUndoes() {
        qt().withExamples(30).forAll(integers().between(0, 40), integers().between(0, 40), integers().between(0, 20),
                integers().between(1, 1000)).checkAssert((i, j, shift, seed) -> {
                    int d = 16;
                    HalfSplitRope rope = new HalfSplitRope(d, 64, 10000.0);
                    Rng rng = new Rng(seed);
                    double[] q = rng.normals(d, 0, 1);
                    double[] k = rng.normals(d, 0, 1);
                    double base = dot(rotated(rope, q, i), rotated(rope, k, j));
                    double shifted = dot(rotated(rope, q, i + shift), rotated(rope, k, j + shift));
                    assertThat(shifted).isCloseTo(base, org.assertj.core.data.Offset.offset(1e-12));
                    Tensor x = placed(q, i, 64);
                    rope.rotate(x, 1, 64, 1, 1);
                    rope.rotate(x, 1, 64, 1, -1);
                    for (int c = 0; c < d; c++) {
                        assertThat(x.get(i * d + c)).isCloseTo(q[c], org.assertj.core.data.Offset.offset(1e-14));
                    }
                });
    }

    private static double[] rotated(HalfSplitRope rope, double[] v, int position) {
        Tensor x = placed(v, position, 64);
        rope.rotate(x, 1, 64, 1, 1);
        double[] out = new double[v.length];
        for (int c = 0; c < v.length; c++) {
            out[c] = x.get(position * v.length + c);
        }
        return out;
    }

    private static Tensor placed(double[] v, int position, int seq) {
        Tensor x = Tensor.zeros(Precision.FP64, seq, v.length);
        for (int c = 0; c < v.length; c++) {
            x.set(position * v.length + c, v[c]);
        }
        return x;
    }

    private static double dot(double[] a, double[] b) {
        double s = 0;
        for (int i = 0; i < a.length; i++) {
            s += a[i] * b[i];
        }
        return s;
    }

    private static Tensor random(Rng rng, int n) {
        return Tensor.of(Precision.FP64, rng.normals(n, 0, 1), n);
    }

    /** Token-major [b, t, h, d] → the backend's [b, h, t, d]. */
    private static double[] headMajor(Tensor x, HeadLayout l, int heads) {
        int d = l.headDim();
        double[] out = new double[x.size()];
        for (int b = 0; b < l.batch(); b++) {
            for (int t = 0; t < l.seqLen(); t++) {
                for (int h = 0; h < heads; h++) {
                    for (int c = 0; c < d; c++) {
                        out[((b * heads + h) * l.seqLen() + t) * d + c] = x.get(((b * l.seqLen() + t) * heads + h) * d + c);
                    }
                }
            }
        }
        return out;
    }
}
