package org.mechspec.kernels;

import org.mechspec.compute.FloatArrays;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.AttentionShape;
import org.mechspec.compute.Backend;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.CpuBackendDecorator;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;
import org.mechspec.spec.Breaks;

/** Each platform check reports false on a deliberately broken mechanism. */
@Tag("kernels")
class KernelMutantsTest {

    @Test
    void correctCpuBackendPassesEveryCheck() {
        assertThat(KernelChecks.halfMismatches(CpuBackend.INSTANCE)).isZero();
        assertThat(KernelChecks.rngMatchesTestVector(new Rng(42), new Rng(42))).isTrue();
        var c = KernelChecks.attentionCase(42, true, true);
        assertThat(KernelChecks.attentionFp32(CpuBackend.INSTANCE, c).holds()).isTrue();
        assertThat(KernelChecks.attentionFp64(CpuBackend.INSTANCE, c).holds()).isTrue();
    }

    @Test
    @Breaks(paper = "kernels", check = "rng_pinned_test_vector")
    void mutantRngWrongSeedFailsTestVector() {
        assertThat(KernelChecks.rngMatchesTestVector(new Rng(42), new Rng(42))).isTrue();
        assertThat(KernelChecks.rngMatchesTestVector(new Rng(43), new Rng(42))).isFalse();
        assertThat(KernelChecks.rngMatchesTestVector(new Rng(42), new Rng(41))).isFalse();
    }

    @Test
    @Breaks(paper = "kernels", check = "fp16_round_nearest_even_exhaustive")
    void mutantFp16ThroughFloatDoubleRoundsAndFails() {
        Backend viaFloat = new CpuBackendDecorator() {
            @Override
            public double[] roundToHalf(double[] x) {
                double[] out = new double[x.length];
                for (int i = 0; i < x.length; i++) {
                    out[i] = HalfFloat.roundToHalf((float) x[i]); // rounds twice
                }
                return out;
            }
        };
        assertThat(KernelChecks.halfMismatches(CpuBackend.INSTANCE)).isZero();
        assertThat(KernelChecks.halfMismatches(viaFloat)).isPositive();
    }

    @Test
    @Breaks(paper = "kernels", check = "bf16_round_nearest_even_exhaustive")
    void mutantBf16TruncationFails() {
        Backend truncates = new CpuBackendDecorator() {
            @Override
            public double[] roundToBfloat16(double[] x) {
                double[] out = new double[x.length];
                for (int i = 0; i < x.length; i++) {
                    out[i] = Float.intBitsToFloat(Float.floatToRawIntBits((float) x[i]) & 0xFFFF0000);
                }
                return out;
            }
        };
        assertThat(KernelChecks.bfloat16Mismatches(CpuBackend.INSTANCE)).isZero();
        assertThat(KernelChecks.bfloat16Mismatches(truncates)).isPositive();
    }

    @Test
    @Breaks(paper = "kernels", check = "fp16_round_nearest_even_exhaustive")
    void mutantFp16TiesAwayFromZeroFails() {
        Backend tiesAway = new CpuBackendDecorator() {
            @Override
            public double[] roundToHalf(double[] x) {
                double[] out = CpuBackend.INSTANCE.roundToHalf(x);
                for (int i = 0; i < x.length; i++) {
                    double lo = out[i];
                    double next = HalfFloat.fromHalfBits((short) (HalfFloat.toHalfBits(Math.abs(lo)) + 1));
                    if (Double.isFinite(x[i]) && Math.abs(x[i]) - Math.abs(lo) == (next - Math.abs(lo)) / 2) {
                        out[i] = Math.copySign(next, x[i]);
                    }
                }
                return out;
            }
        };
        assertThat(KernelChecks.halfMismatches(CpuBackend.INSTANCE)).isZero();
        assertThat(KernelChecks.halfMismatches(tiesAway)).isPositive();
    }

    @Test
    @Breaks(paper = "kernels", check = "attention_fp32_flash_rule")
    @Breaks(paper = "kernels", check = "attention_fp64_flash_rule")
    void mutantAttentionDropsLastKeyFailsBothRules() {
        Backend dropsLastKey = new CpuBackendDecorator() {
            @Override
            public float[] attention(AttentionShape s, float[] q, float[] k, float[] v, float[] bias) {
                return CpuBackend.INSTANCE.attention(shrink(s), q, trim(k, s, s.headDim()), trim(v, s, s.valueDim()), trimBias(bias, s));
            }

            @Override
            public double[] attention(AttentionShape s, double[] q, double[] k, double[] v, double[] bias) {
                float[] out = attention(s, FloatArrays.narrow(q), FloatArrays.narrow(k), FloatArrays.narrow(v), bias == null ? null : FloatArrays.narrow(bias));
                double[] d = new double[out.length];
                for (int i = 0; i < d.length; i++) {
                    d[i] = out[i];
                }
                return d;
            }
        };
        var c = KernelChecks.attentionCase(42, false, false);
        assertThat(KernelChecks.attentionFp32(CpuBackend.INSTANCE, c).holds()).isTrue();
        assertThat(KernelChecks.attentionFp64(CpuBackend.INSTANCE, c).holds()).isTrue();
        assertThat(KernelChecks.attentionFp32(dropsLastKey, c).holds()).isFalse();
        assertThat(KernelChecks.attentionFp64(dropsLastKey, c).holds()).isFalse();
    }

    @Test
    @Breaks(paper = "kernels", check = "attention_fp32_flash_rule")
    void mutantAttentionLeavesOutputUnwrittenFails() {
        Backend unwritten = new CpuBackendDecorator() {
            @Override
            public float[] attention(AttentionShape s, float[] q, float[] k, float[] v, float[] bias) {
                float[] out = CpuBackend.INSTANCE.attention(s, q, k, v, bias);
                out[out.length - 1] = Float.NaN; // the poison a skipped element would keep
                return out;
            }
        };
        var c = KernelChecks.attentionCase(43, true, false);
        assertThat(KernelChecks.attentionFp32(CpuBackend.INSTANCE, c).holds()).isTrue();
        assertThat(KernelChecks.attentionFp32(unwritten, c).holds()).isFalse();
    }

    @Test
    @Breaks(paper = "kernels", check = "attention_fp64_flash_rule")
    void mutantAttentionFp64ComputedInFp32FailsFp64Rule() {
        Backend lowPrecision = new CpuBackendDecorator() {
            @Override
            public double[] attention(AttentionShape s, double[] q, double[] k, double[] v, double[] bias) {
                float[] out = CpuBackend.INSTANCE.attention(s, FloatArrays.narrow(q), FloatArrays.narrow(k), FloatArrays.narrow(v), bias == null ? null : FloatArrays.narrow(bias));
                double[] d = new double[out.length];
                for (int i = 0; i < d.length; i++) {
                    d[i] = out[i];
                }
                return d;
            }
        };
        var c = KernelChecks.attentionCase(44, true, true);
        assertThat(KernelChecks.attentionFp64(CpuBackend.INSTANCE, c).holds()).isTrue();
        assertThat(KernelChecks.attentionFp64(lowPrecision, c).holds()).isFalse();
    }

    /**
     * Right but different: a FlashAttention-style blocked online softmax, in tiles of 1, 32 and 128 keys, passes both
     * property halves in fp64 and in float arithmetic; the bound does not condemn another order of rounding.
     */
    @Test
    void blockedOnlineSoftmaxPassesBothPropertyHalves() {
        for (int tile : new int[] {1, 32, 128}) {
            Backend blocked = AttentionVariants.backend(AttentionVariants.Variant.blocked(tile));
            KernelContracts.fp64WithinBoundOverRegimes(blocked);
            KernelContracts.fp32WithinBoundOverRegimes(blocked);
        }
    }

    /**
     * A softmax without the max shift is right on ordinary logits, so the pinned shapes (N(0, 1) inputs) let it through;
     * the property halves' large and shifted logits overflow or underflow its exp and reject it.
     */
    @Test
    @Breaks(paper = "kernels", check = "attention_fp64_flash_rule")
    @Breaks(paper = "kernels", check = "attention_fp32_flash_rule")
    void softmaxWithoutTheMaxShiftFailsBothPropertyHalves() {
        Backend unshifted = AttentionVariants.backend(AttentionVariants.Variant.blocked(64).withoutMaxShift());
        var c = KernelChecks.attentionCase(42, true, true);
        assertThat(KernelChecks.attentionFp64(unshifted, c).holds()).as("ordinary logits do not show it").isTrue();
        assertThatThrownBy(() -> KernelContracts.fp64WithinBoundOverRegimes(unshifted)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("attention_fp64_max_error");
        assertThatThrownBy(() -> KernelContracts.fp32WithinBoundOverRegimes(unshifted)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("attention_fp32_max_error");
    }

    /**
     * An fp64 attention wrong only for 16 < Tk < 100 keys (a tail tile it skips): the pinned shapes have 301 and 7001
     * keys, so only the fp64 property half's key counts (17, 31–33, 63–65) reach it.
     */
    @Test
    @Breaks(paper = "kernels", check = "attention_fp64_flash_rule")
    void fp64AttentionWrongOnlyBetween16And100KeysFailsTheFp64PropertyHalf() {
        Backend band = AttentionVariants.backend(AttentionVariants.Variant.blocked(16).droppingLastKeyFor(17, 99));
        var c = KernelChecks.attentionCase(42, true, false);
        assertThat(KernelChecks.attentionFp64(band, c).holds()).as("301 keys do not show it").isTrue();
        assertThat(KernelChecks.attentionFp64(band, KernelChecks.longKeysCase(42, false)).holds()).as("nor 7001").isTrue();
        assertThatThrownBy(() -> KernelContracts.fp64WithinBoundOverRegimes(band)).isInstanceOf(AssertionError.class)
                .hasMessageContaining("attention_fp64_max_error");
    }

    private static AttentionShape shrink(AttentionShape s) {
        return new AttentionShape(s.batch(), s.queryHeads(), s.kvHeads(), Math.min(s.queryLen(), s.keyLen() - 1), s.keyLen() - 1,
                s.headDim(), s.valueDim(), s.scale(), false);
    }

    private static float[] trim(float[] x, AttentionShape s, int width) {
        int rows = s.batch() * s.kvHeads();
        float[] out = new float[rows * (s.keyLen() - 1) * width];
        for (int r = 0; r < rows; r++) {
            System.arraycopy(x, r * s.keyLen() * width, out, r * (s.keyLen() - 1) * width, (s.keyLen() - 1) * width);
        }
        return out;
    }

    private static float[] trimBias(float[] bias, AttentionShape s) {
        return bias == null ? null : trim(bias, s, 1);
    }
}
