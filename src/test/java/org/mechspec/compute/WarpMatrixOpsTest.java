package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The tensor-core, bit-level and special-function building blocks of {@code src/main/cuda/warp_ops.cuh} (mma.sync
 * m16n8k16, fp16 subnormal operands included, lop3, ex2.approx.ftz, codes_to_half2: PRMT and LOP3, copy_async_if:
 * a predicated cp.async) and
 * CUDA's {@code __byte_perm}, {@code __funnelshift_r} and half2 arithmetic give the values worked out by hand here: on a GPU from the PTX
 * instructions, on the emulated driver from its models (src/test/emulator/emu_mma.h, include/cuda_fp16.h), so a
 * kernel built on them means the same on both. Kernels: {@code selftest_mma}, {@code selftest_bits}, {@code selftest_ex2}, {@code selftest_copy_async} in
 * {@code src/test/cuda/emulator_selftest.cu}.
 */
@Tag("cuda")
@Tag("platform")
class WarpMatrixOpsTest {
    private static final String MODULE = "emulator_selftest";

    private static CudaBackend cuda() {
        assumeThat(DeviceProbe.unavailableReason()).as("no CUDA driver in this JVM").isNull();
        return CudaBackend.get();
    }

    /** D [16][8] from one warp's mma of A [16][16] and B [16][8] (row-major fp16 bits) plus C [16][8]. */
    private static float[] mma(double[][] a, double[][] b, float[] c) {
        short[] ah = new short[16 * 16];
        short[] bh = new short[16 * 8];
        for (int i = 0; i < 16; i++) {
            for (int k = 0; k < 16; k++) {
                ah[i * 16 + k] = HalfFloat.toHalfBits(a[i][k]);
            }
        }
        for (int k = 0; k < 16; k++) {
            for (int j = 0; j < 8; j++) {
                bh[k * 8 + j] = HalfFloat.toHalfBits(b[k][j]);
            }
        }
        float[] d = new float[16 * 8];
        CudaBackend cuda = cuda();
        try (CudaBackend.DeviceBuffers buf = cuda.new DeviceBuffers()) {
            CUdeviceptr da = buf.upload(Pointer.to(ah), (long) ah.length * Sizeof.SHORT);
            CUdeviceptr db = buf.upload(Pointer.to(bh), (long) bh.length * Sizeof.SHORT);
            CUdeviceptr dc = buf.upload(Pointer.to(c), (long) c.length * Sizeof.FLOAT);
            CUdeviceptr dd = buf.poisoned((long) d.length * Sizeof.FLOAT);
            JCudaDriver.cuLaunchKernel(cuda.function(MODULE, "selftest_mma"), 1, 1, 1, 32, 1, 1, 0, null, null,
                    new KernelArgs().ptr(da).ptr(db).ptr(dc).ptr(dd).extra());
            JCudaDriver.cuCtxSynchronize();
            buf.download(Pointer.to(d), dd, (long) d.length * Sizeof.FLOAT);
        }
        return d;
    }

    /** An element of a matrix by its row and column. */
    private interface Entry {
        double at(int row, int col);
    }

    private static double[][] matrix(int rows, int cols, Entry e) {
        double[][] m = new double[rows][cols];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                m[i][j] = e.at(i, j);
            }
        }
        return m;
    }

    /** C [16][8] flattened, as the kernel reads it. */
    private static float[] flat(double[][] c) {
        float[] f = new float[16 * 8];
        for (int i = 0; i < 16; i++) {
            for (int j = 0; j < 8; j++) {
                f[i * 8 + j] = (float) c[i][j];
            }
        }
        return f;
    }

    @Test
    void anIdentityAPicksTheRowsOfBAndAddsC() {
        double[][] a = matrix(16, 16, (i, k) -> i == k ? 1 : 0);
        double[][] b = matrix(16, 8, (k, j) -> k * 8 + j - 64);   // −64 … 63: every fragment position differs
        double[][] c = matrix(16, 8, (i, j) -> 0.5 * (i - j));
        float[] d = mma(a, b, flat(c));
        // By hand: D[i][j] = B[i][j] + C[i][j]; e.g. D[0][0] = −64, D[9][3] = 11 + 3 = 14, D[15][7] = 63 + 4 = 67.
        assertThat(d[0]).isEqualTo(-64f);
        assertThat(d[9 * 8 + 3]).isEqualTo(14f);
        assertThat(d[15 * 8 + 7]).isEqualTo(67f);
        for (int i = 0; i < 16; i++) {
            for (int j = 0; j < 8; j++) {
                assertThat(d[i * 8 + j]).as("D[%d][%d]", i, j).isEqualTo((float) (b[i][j] + c[i][j]));
            }
        }
    }

    @Test
    void everyElementIsItsRowTimesItsColumnPlusC() {
        // Small integers (and halves in C): every product and sum is exact in fp32, whatever the order.
        double[][] a = matrix(16, 16, (i, k) -> (i * 3 + k * 5) % 7 - 3);
        double[][] b = matrix(16, 8, (k, j) -> (k * 2 + j * 3) % 5 - 2);
        double[][] c = matrix(16, 8, (i, j) -> (i * 8 + j) % 4 - 1.5);
        float[] d = mma(a, b, flat(c));
        for (int i = 0; i < 16; i++) {
            for (int j = 0; j < 8; j++) {
                double want = c[i][j];
                for (int k = 0; k < 16; k++) {
                    want += a[i][k] * b[k][j];
                }
                assertThat(d[i * 8 + j]).as("D[%d][%d]", i, j).isEqualTo((float) want);
            }
        }
    }

    @Test
    void subnormalCodesTimesWeightsAreExact() {
        // The decode kernels' operands: A the codes as fp16 subnormals (code·2^-24, code 0 .. 7: warp_ops.cuh's
        // paired_codes_to_half2), B weights of very different sizes, a column each: small integers times 2^-24
        // (subnormal too), 2^-20, 2^-14 (the least normal), 2^-3, 1, 2^5, 2^10 and 2^14 (the largest the kernels
        // stage). Every product and every column's sum is an integer times one power of two, exact in fp32 in any
        // order: a tensor core that flushed subnormal operands to zero would give 0 in every column.
        int[] exponent = {-24, -20, -14, -3, 0, 5, 10, 14};
        double[][] a = matrix(16, 16, (i, k) -> ((i * 3 + k * 5) % 8) * 0x1.0p-24);
        double[][] b = matrix(16, 8, (k, j) -> ((k * 2 + j * 3) % 5 - 2) * Math.scalb(1.0, exponent[j]));
        float[] d = mma(a, b, new float[16 * 8]);
        // By hand: D[1][0] = Σ_k ((3 + 5k) mod 8)·((2k mod 5) − 2) · 2^-48 = −2^-48.
        assertThat(d[8]).isEqualTo((float) -0x1.0p-48);
        for (int i = 0; i < 16; i++) {
            for (int j = 0; j < 8; j++) {
                double want = 0;
                for (int k = 0; k < 16; k++) {
                    want += a[i][k] * b[k][j];
                }
                assertThat(d[i * 8 + j]).as("D[%d][%d]", i, j).isEqualTo((float) want).isNotZero();
            }
        }
    }

    @Test
    void lop3BytePermFunnelShiftAndHalf2ArithmeticGiveTheirDocumentedValues() {
        int a = 0x12345678;
        int b = 0x9ABCDEF0;
        int c = 0x0F0F0F0F;
        int[] x = {a, b, c, 0x00020001};
        int[] out = new int[16];
        CudaBackend cuda = cuda();
        try (CudaBackend.DeviceBuffers buf = cuda.new DeviceBuffers()) {
            CUdeviceptr dx = buf.upload(Pointer.to(x), (long) x.length * Sizeof.INT);
            CUdeviceptr dout = buf.poisoned((long) out.length * Sizeof.INT);
            JCudaDriver.cuLaunchKernel(cuda.function(MODULE, "selftest_bits"), 1, 1, 1, 1, 1, 1, 0, null, null,
                    new KernelArgs().ptr(dx).ptr(dout).extra());
            JCudaDriver.cuCtxSynchronize();
            buf.download(Pointer.to(out), dout, (long) out.length * Sizeof.INT);
        }
        assertThat(out[0]).as("lop3 0xF0: a").isEqualTo(a);
        assertThat(out[1]).as("lop3 0xCC: b").isEqualTo(b);
        assertThat(out[2]).as("lop3 0xAA: c").isEqualTo(c);
        assertThat(out[3]).as("lop3 0x96: a ^ b ^ c").isEqualTo(0x87878787);
        assertThat(out[4]).as("lop3 0xE8: majority").isEqualTo((a & b) | (a & c) | (b & c));
        assertThat(out[5]).as("byte_perm 0x3210: a").isEqualTo(a);
        assertThat(out[6]).as("byte_perm 0x7654: b").isEqualTo(b);
        assertThat(out[7]).as("byte_perm 0x0123: a's bytes reversed").isEqualTo(0x78563412);
        assertThat(out[8]).as("byte_perm 0x5140").isEqualTo(0xDE56F078);
        // Codes 1 and 2 → (1024 + code)·0.25 − 257 = −0.75 (0xBA00), −0.5 (0xB800).
        assertThat(out[9]).as("magic-number dequantization").isEqualTo(0xB800BA00);
        // 1 + 2^-10 = 0x3C01; 2048 + 1 lies halfway between 2048 and 2050: the even one, 2048 (0x6800).
        assertThat(out[10]).as("__hadd2").isEqualTo(0x68003C01);
        // 3 · 0x3555 (0.333251953125) = 1 − 2^-12, halfway below 1: the even one, 1.0 (0x3C00); −0.5 · 65504 = −32752 (0xF7FF).
        assertThat(out[11]).as("__hmul2").isEqualTo(0xF7FF3C00);
        // b:a = 0x9ABCDEF0_12345678: by 0, a; by 12, b's low 12 bits above a's top 20; by 44, the same (44 & 31 = 12).
        assertThat(out[12]).as("__funnelshift_r by 0").isEqualTo(a);
        assertThat(out[13]).as("__funnelshift_r by 12").isEqualTo(0xEF012345);
        assertThat(out[14]).as("__funnelshift_r by 44 wraps").isEqualTo(0xEF012345);
        // The codes 5 and 387 (0x183) as the mantissas of subnormal halves (exponent field 0: code·2^-24), the bits
        // above the masks dropped.
        assertThat(out[15]).as("codes_to_half2: the codes' bits, subnormal halves 387·2^-24 and 5·2^-24").isEqualTo(0x01830005);
    }

    /** copy_async_if: the words whose predicate holds are copied, the others left as they were. */
    @Test
    void aPredicatedAsyncCopyCopiesTheWordsWhosePredicateHolds() {
        int[] src = new int[64];
        for (int i = 0; i < src.length; i++) {
            src[i] = 0x1000 + i;
        }
        int[] out = new int[64];
        CudaBackend cuda = cuda();
        try (CudaBackend.DeviceBuffers buf = cuda.new DeviceBuffers()) {
            CUdeviceptr dsrc = buf.upload(Pointer.to(src), (long) src.length * Sizeof.INT);
            CUdeviceptr dout = buf.poisoned((long) out.length * Sizeof.INT);
            JCudaDriver.cuLaunchKernel(cuda.function(MODULE, "selftest_copy_async"), 1, 1, 1, 32, 1, 1, 64 * Sizeof.INT, null, null,
                    new KernelArgs().ptr(dsrc).ptr(dout).extra());
            JCudaDriver.cuCtxSynchronize();
            buf.download(Pointer.to(out), dout, (long) out.length * Sizeof.INT);
        }
        for (int lane = 0; lane < 32; lane++) {
            assertThat(out[lane]).as("word %d (lane %d, copied where even)", lane, lane).isEqualTo(lane % 2 == 0 ? src[lane] : 0xDEADBEEF);
            assertThat(out[32 + lane]).as("word %d (lane %d, copied where < 5)", 32 + lane, lane)
                    .isEqualTo(lane < 5 ? src[32 + lane] : 0xDEADBEEF);
        }
    }

    /**
     * ex2_ftz: 2^x within exp2f's documented 2 ulps where the result is a normal float; 0 where it would be below
     * 2^-126 (ftz, where exp2f gives a subnormal) and for -inf; a subnormal x read as 0 (result 1).
     */
    @Test
    void ex2FtzIsExp2fWithoutSubnormals() {
        float[] x = {0f, -1f, 3f, 0.5f, -125f, -126.5f, -127f, -149f, Float.NEGATIVE_INFINITY, Float.MIN_VALUE, -Float.MIN_VALUE, -10.25f};
        float[] out = new float[x.length];
        CudaBackend cuda = cuda();
        try (CudaBackend.DeviceBuffers buf = cuda.new DeviceBuffers()) {
            CUdeviceptr dx = buf.upload(Pointer.to(x), (long) x.length * Sizeof.FLOAT);
            CUdeviceptr dout = buf.poisoned((long) out.length * Sizeof.FLOAT);
            JCudaDriver.cuLaunchKernel(cuda.function(MODULE, "selftest_ex2"), 1, 1, 1, 1, 1, 1, 0, null, null,
                    new KernelArgs().ptr(dx).ptr(dout).i32(x.length).extra());
            JCudaDriver.cuCtxSynchronize();
            buf.download(Pointer.to(out), dout, (long) out.length * Sizeof.FLOAT);
        }
        double[] exact = {1, 0.5, 8, Math.sqrt(2), 0x1p-125, 0, 0, 0, 0, 1, 1, Math.pow(2, -10.25)};
        for (int i = 0; i < x.length; i++) {
            if (exact[i] == 0) { // 2^-126.5 .. 2^-149: subnormal from exp2f, 0 here
                assertThat(out[i]).as("ex2_ftz(%s): below 2^-126, flushed", x[i]).isEqualTo(0f);
            } else {
                // Within 2 ulps of 2^x: at most two floats from its correctly rounded one (all positive here).
                int floatsAway = Math.abs(Float.floatToIntBits(out[i]) - Float.floatToIntBits((float) exact[i]));
                assertThat(floatsAway).as("ex2_ftz(%s) = %s, floats from %s", x[i], out[i], exact[i]).isLessThanOrEqualTo(2);
            }
        }
    }
}
