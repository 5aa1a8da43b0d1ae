package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.kernels.KernelChecks;

/** Negative zero survives fp16, as it does in the CUDA kernel ({@code cvt.rn.f16.f64} keeps the sign). */
@Tag("platform")
class HalfFloatSignTest {
    private static final long NEGATIVE_ZERO = Double.doubleToRawLongBits(-0.0);

    @Test
    void negativeZeroAndTinyNegativesRoundToNegativeZero() {
        assertThat(Double.doubleToRawLongBits(HalfFloat.fromHalfBits((short) 0x8000))).isEqualTo(NEGATIVE_ZERO);
        assertThat(Double.doubleToRawLongBits(HalfFloat.roundToHalf(-1e-30))).isEqualTo(NEGATIVE_ZERO);
        assertThat(Double.doubleToRawLongBits(HalfFloat.roundToHalf(-0x1.0p-25))).isEqualTo(NEGATIVE_ZERO);
        assertThat(Double.doubleToRawLongBits(HalfFloat.roundToHalf(-0.0))).isEqualTo(NEGATIVE_ZERO);
        assertThat(Double.doubleToRawLongBits(HalfFloat.roundToHalf(0x1.0p-26))).isEqualTo(0L);
    }

    @Test
    void exhaustiveRoundingCasesExpectNegativeZeroWhereTheDefinitionGivesIt() {
        KernelChecks.RoundingCases c = KernelChecks.roundingCases(KernelChecks.Format.FP16);
        long expectedNegativeZeros = Arrays.stream(c.expected()).filter(x -> Double.doubleToRawLongBits(x) == NEGATIVE_ZERO).count();
        // The code 0x8000 itself, the midpoint -2^-25 (ties to the even code 0x8000) and the double just above it.
        assertThat(expectedNegativeZeros).isEqualTo(3);
        assertThat(KernelChecks.halfMismatches(CpuBackend.INSTANCE)).isZero();
    }
}
