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
 * The emulated driver reports what a GPU would (an out-of-bounds store, a divergent barrier, a shared-memory
 * over-request, a wrong parameter list, too many threads), and the backend's host code survives each: a fault
 * resets the context, frees go on after one fails. Runs where the emulator is this JVM's driver
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
    void anOutOfBoundsStoreIsAnIllegalAddressAndTheContextRecovers() {
        assertThatThrownBy(() -> launchCopy("selftest_out_of_bounds", 256, 0, true))
                .hasMessageContaining("selftest_out_of_bounds").hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS")
                .hasMessageContaining("context was reset");
        double[] x = {1.0 / 3, -1e-30, 70000};
        assertThat(cuda.roundToHalf(x)).containsExactly(CpuBackend.INSTANCE.roundToHalf(x));
        assertThat(launchCopy("selftest_copy", 256, 0, true)[7]).isEqualTo(3.5f);
    }

    @Test
    void aDivergentBarrierFailsTheLaunch() {
        float[] y = new float[N];
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr dy = b.upload(Pointer.to(y), (long) N * Sizeof.FLOAT);
            assertThatThrownBy(() -> cuda.launch(MODULE, "selftest_divergent_barrier", 4, 256, 0, new KernelArgs().ptr(dy).i32(N)))
                    .hasMessageContaining("CUDA_ERROR_LAUNCH_FAILED");
        }
    }

    @Test
    void sharedMemoryBeyondTheDefaultLimitIsRefusedAtLaunchAndBeyondTheRequestIsAFault() {
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr dy = b.poisoned((long) N * Sizeof.FLOAT);
            assertThatThrownBy(() -> cuda.launch(MODULE, "selftest_shared", 8, 128, 48 * 1024 + 1, new KernelArgs().ptr(dy).i32(N)))
                    .hasMessageContaining("CUDA_ERROR_INVALID_VALUE").hasMessageNotContaining("reset");
            cuda.launch(MODULE, "selftest_shared", 8, 128, 128 * Sizeof.FLOAT, new KernelArgs().ptr(dy).i32(N));
        }
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr dy = b.poisoned((long) N * Sizeof.FLOAT);
            assertThatThrownBy(() -> cuda.launch(MODULE, "selftest_shared", 8, 128, 127 * Sizeof.FLOAT, new KernelArgs().ptr(dy).i32(N)))
                    .hasMessageContaining("CUDA_ERROR_ILLEGAL_ADDRESS");
        }
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

    private static long freeBytes() {
        long[] free = new long[1];
        long[] total = new long[1];
        JCudaDriver.cuMemGetInfo(free, total);
        return free[0];
    }
}
