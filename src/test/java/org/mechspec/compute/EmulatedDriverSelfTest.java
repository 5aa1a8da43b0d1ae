package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.util.Map;
import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.data.DataFiles;

/**
 * The emulated driver in this JVM: a wrong parameter list and too many threads are refused at launch (not sticky),
 * frees go on after one fails, fresh device memory and every block's shared memory hold the poison pattern, a freed
 * range goes to the next allocation that fits (a stale pointer aliases it), and {@code a * b + c} contracts as nvcc
 * contracts it while {@code __dmul_rn}/{@code __dadd_rn} do not. Kernel faults end CUDA for their process, so they
 * are provoked in child JVMs ({@link EmulatedFaultTest}). Runs where the emulator is this JVM's driver
 * ({@code -Dmechspec.backend=cuda-emulated}); the kernels are {@code src/test/cuda/emulator_selftest.cu}.
 */
@Tag("cuda")
@Tag("platform")
class EmulatedDriverSelfTest {
    private static final String MODULE = "emulator_selftest";
    private static final int N = 1000;
    private CudaBackend cuda;

    @BeforeEach
    void needsTheEmulatedDriver() {
        assumeThat(DeviceProbe.unavailableReason()).as("no CUDA driver in this JVM").isNull();
        assumeThat(DeviceProbe.device().emulated()).as("a real GPU: these faults are the emulator's to check").isTrue();
        cuda = CudaBackend.get();
    }

    private float[] launchCopy(String kernel, int threads, int shared, boolean withCount) {
        float[] x = new float[N];
        for (int i = 0; i < N; i++) {
            x[i] = i * 0.5f;
        }
        float[] y = new float[N];
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr dx = b.upload(Pointer.to(x), (long) N * Sizeof.FLOAT);
            CUdeviceptr dy = b.poisoned((long) N * Sizeof.FLOAT);
            KernelArgs args = new KernelArgs().ptr(dx).ptr(dy);
            if (withCount) {
                args.i32(N);
            }
            cuda.launch(MODULE, kernel, (N + threads - 1) / threads, threads, shared, args);
            JCudaDriver.cuMemcpyDtoH(Pointer.to(y), dy, (long) N * Sizeof.FLOAT);
        }
        return y;
    }

    @Test
    void aCorrectKernelRuns() {
        float[] y = launchCopy("selftest_copy", 256, 0, true);
        assertThat(y[0]).isEqualTo(0f);
        assertThat(y[N - 1]).isEqualTo((N - 1) * 0.5f);
    }

    @Test
    void sharedMemoryBeyondTheDefaultLimitIsRefusedAtLaunchNotSticky() {
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr dy = b.poisoned((long) N * Sizeof.FLOAT);
            assertThatThrownBy(() -> cuda.launch(MODULE, "selftest_shared", 8, 128, 48 * 1024 + 1, new KernelArgs().ptr(dy).i32(N)))
                    .hasMessageContaining("CUDA_ERROR_INVALID_VALUE");
            cuda.launch(MODULE, "selftest_shared", 8, 128, 128 * Sizeof.FLOAT, new KernelArgs().ptr(dy).i32(N));
        }
    }

    @Test
    void aKernelReadingMemoryNobodyWroteSeesThePoisonPatternNotZeros() {
        float[] y = new float[N];
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr dx = DeviceMemory.allocation();
            JCudaDriver.cuMemAlloc(dx, (long) N * Sizeof.FLOAT); // fresh: never written
            try {
                CUdeviceptr dy = b.upload(Pointer.to(new float[N]), (long) N * Sizeof.FLOAT);
                cuda.launch(MODULE, "selftest_copy", 4, 256, 0, new KernelArgs().ptr(dx).ptr(dy).i32(N));
                JCudaDriver.cuMemcpyDtoH(Pointer.to(y), dy, (long) N * Sizeof.FLOAT);
            } finally {
                JCudaDriver.cuMemFree(dx);
            }
        }
        for (float v : y) {
            assertThat(Float.floatToRawIntBits(v)).isEqualTo(0xFFFFFFFF);
        }
    }

    @Test
    void everyBlockFindsThePoisonPatternInSharedMemoryNotThePreviousBlocksValues() {
        int blocks = 64;
        int threads = 32;
        float[] y = new float[blocks * threads];
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr dy = b.upload(Pointer.to(y), (long) y.length * Sizeof.FLOAT);
            // Reads its shared memory before writing its block index there: 64 blocks on at most a few workers.
            cuda.launch(MODULE, "selftest_shared_leftover", blocks, threads, threads * Sizeof.FLOAT, new KernelArgs().ptr(dy));
            JCudaDriver.cuMemcpyDtoH(Pointer.to(y), dy, (long) y.length * Sizeof.FLOAT);
        }
        for (float v : y) {
            assertThat(Float.floatToRawIntBits(v)).as("what a block found in shared memory").isEqualTo(0xFFFFFFFF);
        }
    }

    @Test
    void aStalePointerAliasesTheAllocationThatReusesItsRange() {
        float[] x = new float[N];
        java.util.Arrays.fill(x, 42f);
        float[] later = new float[N];
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr src = b.upload(Pointer.to(x), (long) N * Sizeof.FLOAT);
            CUdeviceptr stale = DeviceMemory.allocation();
            JCudaDriver.cuMemAlloc(stale, (long) N * Sizeof.FLOAT);
            JCudaDriver.cuMemFree(stale);
            CUdeviceptr reused = DeviceMemory.allocation();
            JCudaDriver.cuMemAlloc(reused, (long) N * Sizeof.FLOAT);
            try {
                assertThat(reused).as("the next allocation that fits gets the freed range").isEqualTo(stale);
                // A kernel given the stale pointer writes into the new allocation: no fault, wrong data.
                cuda.launch(MODULE, "selftest_copy", 4, 256, 0, new KernelArgs().ptr(src).ptr(stale).i32(N));
                JCudaDriver.cuMemcpyDtoH(Pointer.to(later), reused, (long) N * Sizeof.FLOAT);
            } finally {
                JCudaDriver.cuMemFree(reused);
            }
        }
        assertThat(later).containsOnly(42f);
    }

    @Test
    void aMultiplyAddContractsAsNvccContractsItAndTheRoundingIntrinsicsDoNot() {
        assumeThat(hostHasFma()).as("build.sh compiles kernels without contraction on a CPU without FMA").isTrue();
        double e = 0x1p-30;
        float e32 = 0x1p-13f;
        double[] out = new double[3];
        float[] out32 = new float[3];
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            // (1 + e)(1 - e) - 1: rounded product 1, so 0 unfused; -e² fused.
            CUdeviceptr abc = b.upload(Pointer.to(new double[] {1 + e, 1 - e, -1}), 3L * Sizeof.DOUBLE);
            CUdeviceptr abc32 = b.upload(Pointer.to(new float[] {1 + e32, 1 - e32, -1}), 3L * Sizeof.FLOAT);
            CUdeviceptr dout = b.poisoned(3L * Sizeof.DOUBLE);
            CUdeviceptr dout32 = b.poisoned(3L * Sizeof.FLOAT);
            cuda.launch(MODULE, "selftest_multiply_add", 1, 1, 0, new KernelArgs().ptr(abc).ptr(dout).ptr(abc32).ptr(dout32));
            JCudaDriver.cuMemcpyDtoH(Pointer.to(out), dout, 3L * Sizeof.DOUBLE);
            JCudaDriver.cuMemcpyDtoH(Pointer.to(out32), dout32, 3L * Sizeof.FLOAT);
        }
        assertThat(out).as("a * b + c, __dadd_rn(__dmul_rn(a, b), c), __fma_rn(a, b, c)").containsExactly(-e * e, 0.0, -e * e);
        assertThat(out32).as("the same in float").containsExactly(-e32 * e32, 0f, -e32 * e32);
    }

    @Test
    void aWrongParameterListIsRefused() {
        assertThatThrownBy(() -> launchCopy("selftest_copy", 256, 0, false))
                .hasMessageContaining("CUDA_ERROR_INVALID_VALUE").hasMessageContaining("2 arguments");
    }

    @Test
    void moreThan1024ThreadsPerBlockAreRefused() {
        assertThatThrownBy(() -> launchCopy("selftest_copy", 1025, 0, true)).hasMessageContaining("CUDA_ERROR_INVALID_VALUE");
    }

    @Test
    void aModuleTheDriverRefusesIsNotLoadedAgain() {
        IllegalStateException first = catchThrowableOfType(IllegalStateException.class,
                () -> cuda.function("not_a_module", "k"));
        assertThat(first).hasMessageContaining("cannot load kernel image not_a_module.fatbin").hasCauseInstanceOf(CudaException.class);
        IllegalStateException again = catchThrowableOfType(IllegalStateException.class,
                () -> cuda.function("not_a_module", "k"));
        assertThat(again).as("the remembered failure, not a second load").hasMessage(first.getMessage()).hasNoCause();
    }

    @Test
    void closingFreesEveryBufferEvenWhenOneFreeFails() {
        long before = freeBytes();
        CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers();
        CUdeviceptr first = b.poisoned(1 << 20);
        b.poisoned(1 << 20);
        b.poisoned(1 << 20);
        JCudaDriver.cuMemFree(first); // behind the buffers' back: their own free of it now fails
        assertThatThrownBy(b::close).hasMessageContaining("cuMemFree failed for 1 device buffer");
        assertThat(freeBytes()).as("the other two were freed all the same").isEqualTo(before);
    }

    @Test
    void provenanceNamesDriverCompilerAndTheLoadedImage() {
        cuda.roundToHalf(new double[] {1.0});
        cuda.function(MODULE, "selftest_copy");
        Map<String, Object> p = cuda.provenance();
        assertThat(cuda.name()).isEqualTo("cuda-emulated");
        assertThat(p).containsEntry("emulated", true).containsEntry("driver_cuda_version", "13.0")
                .containsEntry("compute_capability", "9.0");
        assertThat((String) p.get("nvcc")).contains("release " + KernelImages.nvccRelease());
        @SuppressWarnings("unchecked")
        Map<String, Map<String, String>> images = (Map<String, Map<String, String>>) p.get("images");
        assertThat(images.get("rounding")).containsEntry("sha256", DataFiles.sha256(KernelImages.read("rounding")))
                .containsEntry("image", "sm_90 SASS");
        assertThat(images).as("test kernels are not the jar's").doesNotContainKey(MODULE);
    }

    private static boolean hostHasFma() {
        try {
            return java.nio.file.Files.readAllLines(java.nio.file.Path.of("/proc/cpuinfo")).stream()
                    .anyMatch(l -> l.startsWith("flags") && java.util.Arrays.asList(l.split("\\s+")).contains("fma"));
        } catch (java.io.IOException e) {
            return false;
        }
    }

    private static long freeBytes() {
        long[] free = new long[1];
        long[] total = new long[1];
        JCudaDriver.cuMemGetInfo(free, total);
        return free[0];
    }
}
