package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A kernel fault ends CUDA for its process, as CUDA's documentation says of CUDA_ERROR_ILLEGAL_ADDRESS,
 * LAUNCH_FAILED, ASSERT and the other sticky errors: after the fault every later call that works on a context
 * fails with the same error, a primary-context reset and a context destroy included. Each fault is provoked in a
 * child JVM on the emulated driver (this JVM's CUDA stays usable), which then tries one call of each kind and prints
 * what each returned. The assertions read the driver's own error names, so they hold whether the backend names the
 * failed kernel itself or leaves that to the driver's line on stderr.
 */
@Tag("cuda")
@Tag("emulator-process")
@Tag("platform")
class EmulatedFaultTest {
    private static final String MODULE = "emulator_selftest";
    private static final int N = 1000;

    @BeforeEach
    void needsTheEmulator() {
        assumeThat(ChildJvm.emulator()).as("the emulated driver was not built (no g++)").isNotNull();
        assumeThat(KernelImages.built()).as("nvcc was not found at build time").isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "out-of-bounds, selftest_out_of_bounds, CUDA_ERROR_ILLEGAL_ADDRESS, illegal 4-byte write",
        "shared-beyond-request, selftest_shared, CUDA_ERROR_ILLEGAL_ADDRESS, dynamic shared memory offset",
        "divergent-barrier, selftest_divergent_barrier, CUDA_ERROR_LAUNCH_FAILED, divergent __syncthreads",
        "assert, selftest_assert, CUDA_ERROR_ASSERT, x[i] >= 0.0f",
        "misaligned-float4, selftest_misaligned_float4, CUDA_ERROR_MISALIGNED_ADDRESS, misaligned access to 'const struct float4'",
        "warp-mask-names-exited-lane, selftest_warp_exited_lane, CUDA_ERROR_LAUNCH_FAILED, but named lane 5 has exited",
        "warp-lane-at-syncthreads, selftest_warp_stall, CUDA_ERROR_LAUNCH_FAILED, but lane 7 waits at __syncthreads",
        "warp-masks-overlap, selftest_warp_overlapping_masks, CUDA_ERROR_LAUNCH_FAILED, with masks 0x0001ffff and 0xffff0000",
        "warp-caller-unnamed, selftest_warp_caller_unnamed, CUDA_ERROR_LAUNCH_FAILED, 'with mask 0xfffffffe, which does not name it'",
        "async-copy-out-of-bounds, selftest_pipeline_out_of_bounds, CUDA_ERROR_ILLEGAL_ADDRESS, illegal 16-byte read",
    })
    void aFaultFailsEveryLaterCudaCallOfItsProcess(String fault, String kernel, String error, String what) throws Exception {
        // Host math and forward order: the fault, not the strict modes, is under test here.
        ChildJvm.Result r = ChildJvm.run(ChildJvm.emulated(Map.of("MECHSPEC_EMU_THREAD_ORDER", "", "MECHSPEC_EMU_MATH", "")),
                Fault.class.getName(), fault);
        assertThat(r.exit()).as(r.output()).isZero();
        List<String> lines = r.output().lines().toList();
        assertThat(lines).as("the driver's line names the kernel and what it did")
                .anyMatch(l -> l.startsWith("mechspec CUDA emulator: " + kernel + " block (") && l.contains(what));
        assertThat(lines).as(r.output()).anyMatch(l -> l.startsWith("fault: ") && l.contains(error));
        List<String> later = lines.stream().filter(l -> l.startsWith("after the fault, ")).toList();
        assertThat(later).as(r.output()).hasSize(Fault.LATER_CALLS);
        assertThat(later).as("every later CUDA call fails with the first fault's error").allMatch(l -> l.contains(error));
        assertThat(lines).contains("still working: cuGetErrorName gives CUDA_ERROR_ILLEGAL_ADDRESS, cuDeviceGetAttribute 9");
    }

    /** Provokes the fault its argument names, then makes one call of each kind and prints what it returned. */
    public static final class Fault {
        static final int LATER_CALLS = 12;

        public static void main(String[] args) {
            CudaBackend cuda = CudaBackend.get();
            // Made before the fault, used after it: a buffer, a created context, a function, a kernel image.
            CUfunction copy = cuda.function(MODULE, "selftest_copy");
            CUdeviceptr x = alloc(N);
            CUdeviceptr y = alloc(N);
            CUcontext created = new CUcontext();
            CUdevice device = new CUdevice();
            JCudaDriver.cuDeviceGet(device, 0);
            JCudaDriver.cuCtxCreate(created, 0, device);
            JCudaDriver.cuCtxPopCurrent(new CUcontext());
            byte[] image = KernelImages.read("rounding");
            try {
                provoke(cuda, args[0], x, y);
                System.out.println("no fault");
                System.exit(2);
            } catch (RuntimeException e) {
                System.out.println("fault: " + messages(e));
            }
            Map<String, Runnable> later = new LinkedHashMap<>();
            later.put("cuCtxSynchronize", JCudaDriver::cuCtxSynchronize);
            later.put("cuMemAlloc", () -> alloc(N));
            later.put("cuMemcpyHtoD", () -> JCudaDriver.cuMemcpyHtoD(x, Pointer.to(new float[N]), (long) N * Sizeof.FLOAT));
            later.put("cuMemcpyDtoH", () -> JCudaDriver.cuMemcpyDtoH(Pointer.to(new float[N]), x, (long) N * Sizeof.FLOAT));
            later.put("cuMemFree", () -> JCudaDriver.cuMemFree(y));
            later.put("cuModuleLoadData", () -> JCudaDriver.cuModuleLoadData(new CUmodule(), image));
            later.put("cuLaunchKernel", () -> JCudaDriver.cuLaunchKernel(copy, 4, 1, 1, 256, 1, 1, 0, null, null,
                    new KernelArgs().ptr(x).ptr(y).i32(N).extra()));
            later.put("cuDevicePrimaryCtxReset", () -> JCudaDriver.cuDevicePrimaryCtxReset(device));
            later.put("cuCtxSynchronize after the reset", JCudaDriver::cuCtxSynchronize);
            later.put("cuCtxDestroy", () -> JCudaDriver.cuCtxDestroy(created));
            later.put("cuDevicePrimaryCtxRelease", () -> JCudaDriver.cuDevicePrimaryCtxRelease(device));
            later.put("the backend's next call", () -> cuda.roundToHalf(new double[] {1.0 / 3}));
            for (Map.Entry<String, Runnable> call : later.entrySet()) {
                String outcome;
                try {
                    call.getValue().run();
                    outcome = "succeeded";
                } catch (RuntimeException e) {
                    outcome = messages(e);
                }
                System.out.println("after the fault, " + call.getKey() + ": " + outcome);
            }
            // What does not work on a context still works: the error's name, the device's attributes.
            String[] name = new String[1];
            JCudaDriver.cuGetErrorName(jcuda.driver.CUresult.CUDA_ERROR_ILLEGAL_ADDRESS, name);
            int[] major = new int[1];
            JCudaDriver.cuDeviceGetAttribute(major, 75, device);
            System.out.println("still working: cuGetErrorName gives " + name[0] + ", cuDeviceGetAttribute " + major[0]);
        }

        private static void provoke(CudaBackend cuda, String fault, CUdeviceptr x, CUdeviceptr y) {
            switch (fault) {
                case "out-of-bounds" -> cuda.launch(MODULE, "selftest_out_of_bounds", 4, 256, 0, new KernelArgs().ptr(x).ptr(y).i32(N));
                case "shared-beyond-request" -> cuda.launch(MODULE, "selftest_shared", 8, 128, 127 * Sizeof.FLOAT,
                        new KernelArgs().ptr(y).i32(N));
                case "divergent-barrier" -> cuda.launch(MODULE, "selftest_divergent_barrier", 4, 256, 0, new KernelArgs().ptr(y).i32(N));
                case "assert" -> {
                    float[] values = new float[N];
                    values[N / 2] = -1f;
                    JCudaDriver.cuMemcpyHtoD(x, Pointer.to(values), (long) N * Sizeof.FLOAT);
                    cuda.launch(MODULE, "selftest_assert", 4, 256, 0, new KernelArgs().ptr(x).i32(N));
                }
                case "misaligned-float4" -> cuda.launch(MODULE, "selftest_misaligned_float4", 1, 256, 0,
                        new KernelArgs().ptr(x).ptr(y).i32(N / 4));
                case "warp-mask-names-exited-lane" -> cuda.launch(MODULE, "selftest_warp_exited_lane", 4, 256, 0,
                        new KernelArgs().ptr(y).i32(N));
                case "warp-lane-at-syncthreads" -> cuda.launch(MODULE, "selftest_warp_stall", 4, 256, 0, new KernelArgs().ptr(y).i32(N));
                case "warp-masks-overlap" -> cuda.launch(MODULE, "selftest_warp_overlapping_masks", 1, 32, 0, new KernelArgs().ptr(y).i32(N));
                case "warp-caller-unnamed" -> cuda.launch(MODULE, "selftest_warp_caller_unnamed", 1, 32, 0, new KernelArgs().ptr(y).i32(N));
                case "async-copy-out-of-bounds" -> cuda.launch(MODULE, "selftest_pipeline_out_of_bounds", 2, 128, 128 * 20,
                        new KernelArgs().ptr(x).i32(N / 4));
                default -> throw new IllegalArgumentException("unknown fault " + fault);
            }
        }

        private static CUdeviceptr alloc(int floats) {
            CUdeviceptr p = DeviceMemory.allocation();
            JCudaDriver.cuMemAlloc(p, (long) floats * Sizeof.FLOAT);
            return p;
        }

        /** The exception's message and its causes', on one line. */
        private static String messages(Throwable e) {
            List<String> parts = new ArrayList<>();
            for (Throwable t = e; t != null; t = t.getCause()) {
                parts.add(t.getClass().getSimpleName() + ": " + t.getMessage());
            }
            return String.join(" <- ", parts);
        }
    }
}
