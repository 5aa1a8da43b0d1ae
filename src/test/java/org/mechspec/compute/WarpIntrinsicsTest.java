package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Warp intrinsics, vector types, atomics and asynchronous copies give what CUDA defines: a warp reduction by shuffles
 * (with a {@code __syncthreads} between warps) sums each block exactly, each shuffle variant, ballot, all/any,
 * activemask and a half-warp shuffle give their documented values for a 2-D block (threads numbered x first, 32 to a
 * warp), atomics from many blocks (global and shared memory) count and sum exactly, and {@code cp.async} copies land
 * (zero-fill included) once waited for. The kernels are correct CUDA, so this holds on a GPU as on the emulated
 * driver; the emulated driver must also give the same bits in every thread order it can run (checked in child JVMs).
 * Their faults (a mask naming an exited lane, a misaligned float4, an out-of-bounds asynchronous copy) are in
 * {@link EmulatedFaultTest}. Kernels: {@code src/test/cuda/emulator_selftest.cu}.
 */
@Tag("cuda")
@Tag("platform")
class WarpIntrinsicsTest {
    private static final String MODULE = "emulator_selftest";
    private static final int OPS = 11;
    private static final int OPS_THREADS = 64;

    private static CudaBackend cuda() {
        assumeThat(DeviceProbe.unavailableReason()).as("no CUDA driver in this JVM").isNull();
        return CudaBackend.get();
    }

    @Test
    void aShuffleReductionSumsEveryBlockExactly() {
        int n = 1000;
        float[] x = reductionInput(n);
        float[] y = reduce(cuda(), x);
        float[] want = new float[y.length];
        for (int i = 0; i < n; i++) {
            want[i / 256] += x[i];
        }
        assertThat(y).containsExactly(want);
    }

    @Test
    void everyWarpIntrinsicGivesWhatCudaDefines() {
        int[] out = warpOps(cuda());
        for (int t = 0; t < OPS_THREADS; t++) {
            int lane = t % 32;
            int warp = t - lane;
            int ballot = 0;
            for (int l = 0; l < 32; l++) {
                ballot |= (warp + l) % 3 == 0 ? 1 << l : 0;
            }
            int[] want = {
                warp + 3,                                   // __shfl_sync from lane 3
                lane % 8 >= 2 ? t - 2 : t,                  // __shfl_up_sync by 2, width 8
                lane % 16 + 3 < 16 ? t + 3 : t,             // __shfl_down_sync by 3, width 16
                t ^ 5,                                      // __shfl_xor_sync with 5
                ballot,                                     // __ballot_sync(t % 3 == 0)
                warp == 32 ? 3 : 1,                         // __all_sync(t < 1000) + 2 __any_sync(t == 40)
                t ^ 1,                                      // a double through __shfl_xor_sync
                lane < 31 ? t + 1 : t,                      // a long long through __shfl_down_sync
                -1,                                         // __activemask: every lane
                t ^ 8,                                      // each half-warp shuffling with its own mask
                (warp + 31 - lane) * 3,                     // an unsigned through __shfl_sync after __syncwarp
            };
            for (int k = 0; k < OPS; k++) {
                assertThat(out[k * OPS_THREADS + t]).as("intrinsic %d, thread %d", k, t).isEqualTo(want[k]);
            }
        }
    }

    @Test
    void atomicsFromManyBlocksCountAndSumExactly() {
        Atomics a = atomics(cuda());
        int[] bins = new int[8];
        long sum = 0;
        for (int v : a.x) {
            bins[v % 8]++;
            sum += v;
        }
        assertThat(Arrays.copyOf(a.out, 8)).as("atomicAdd on shared memory, then global").containsExactly(bins);
        assertThat(a.out[8]).as("atomicMax").isEqualTo(Arrays.stream(a.x).max().orElseThrow());
        assertThat(a.out[9]).as("atomicMin (unsigned)").isEqualTo(Arrays.stream(a.x).min().orElseThrow());
        assertThat(a.out[10]).as("threads that won the atomicCAS from -1").isEqualTo(1);
        assertThat(a.out[11]).as("the winner's index").isBetween(0, a.x.length - 1);
        assertThat(a.out[12]).as("an index left by atomicExch").isBetween(0, a.x.length - 1);
        assertThat(a.total).as("atomicAdd (unsigned long long)").isEqualTo(sum);
        assertThat(a.dsum).as("atomicAdd (double)").isEqualTo((double) sum);
        assertThat(a.fsum).as("atomicAdd (float), exact below 2^24").isEqualTo((float) sum);
    }

    @Test
    void asynchronousCopiesLandOnceWaitedFor() {
        int n4 = 300;
        float[] x = new float[4 * n4];
        for (int i = 0; i < x.length; i++) {
            x[i] = i + 1;
        }
        float[][] yz = pipeline(cuda(), x);
        for (int i = 0; i < n4; i++) {
            for (int k = 0; k < 4; k++) {
                float want = i % 2 == 1 && k >= 2 ? 0f : x[4 * i + k];
                assertThat(yz[0][4 * i + k]).as("16-byte copy %d, float %d", i, k).isEqualTo(want);
            }
            assertThat(yz[1][i]).as("4-byte copy %d", i).isEqualTo(x[i]);
        }
    }

    @Test
    void theEmulatedDriverGivesTheSameBitsInEveryThreadOrder() throws Exception {
        assumeThat(ChildJvm.emulator()).as("the emulated driver was not built (no g++)").isNotNull();
        assumeThat(KernelImages.built()).as("nvcc was not found at build time").isTrue();
        List<String> prints = new ArrayList<>();
        for (String order : List.of("forward", "reverse", "shuffle:1", "shuffle:2", "shuffle:3")) {
            ChildJvm.Result r = ChildJvm.run(ChildJvm.emulated(Map.of("MECHSPEC_EMU_THREAD_ORDER", order, "MECHSPEC_EMU_MATH", "")),
                    Fingerprints.class.getName());
            assertThat(r.exit()).as(order + ": " + r.output()).isZero();
            prints.add(r.output().lines().filter(l -> l.startsWith("results ")).findFirst().orElseThrow());
        }
        assertThat(prints).as("forward, reverse and three shuffles").allMatch(p -> p.equals(prints.get(0)));
    }

    /** Runs the correct kernels once and prints one line of their results' hashes (the atomics' deterministic ones). */
    public static final class Fingerprints {
        public static void main(String[] args) {
            CudaBackend cuda = CudaBackend.get();
            Atomics a = atomics(cuda);
            float[] x = new float[1200];
            Arrays.fill(x, 2.5f);
            float[][] yz = pipeline(cuda, x);
            System.out.println("results reduce " + Arrays.hashCode(reduce(cuda, reductionInput(1000))) + " ops "
                    + Arrays.hashCode(warpOps(cuda)) + " atomics " + Arrays.hashCode(Arrays.copyOf(a.out, 11)) + " " + a.total
                    + " " + a.dsum + " " + a.fsum + " pipeline " + Arrays.hashCode(yz[0]) + " " + Arrays.hashCode(yz[1]));
        }
    }

    static float[] reductionInput(int n) {
        float[] x = new float[n];
        for (int i = 0; i < n; i++) {
            x[i] = i % 17 - 5;   // integers: every order of summation is exact
        }
        return x;
    }

    static float[] reduce(CudaBackend cuda, float[] x) {
        int threads = 256;
        int blocks = (x.length + threads - 1) / threads;
        float[] y = new float[blocks];
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr dx = b.upload(Pointer.to(x), (long) x.length * Sizeof.FLOAT);
            CUdeviceptr dy = b.poisoned((long) blocks * Sizeof.FLOAT);
            cuda.launch(MODULE, "selftest_warp_reduce", blocks, threads, threads / 32 * Sizeof.FLOAT,
                    new KernelArgs().ptr(dx).ptr(dy).i32(x.length));
            b.download(Pointer.to(y), dy, (long) blocks * Sizeof.FLOAT);
        }
        return y;
    }

    /** selftest_warp_ops on one (16, 4, 1) block: out[k * 64 + t] for intrinsic k and linear thread t. */
    static int[] warpOps(CudaBackend cuda) {
        int[] out = new int[OPS * OPS_THREADS];
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr dout = b.poisoned((long) out.length * Sizeof.INT);
            JCudaDriver.cuLaunchKernel(cuda.function(MODULE, "selftest_warp_ops"), 1, 1, 1, 16, 4, 1, 0, null, null,
                    new KernelArgs().ptr(dout).extra());
            JCudaDriver.cuCtxSynchronize();
            b.download(Pointer.to(out), dout, (long) out.length * Sizeof.INT);
        }
        return out;
    }

    record Atomics(int[] x, int[] out, long total, double dsum, float fsum) {}

    static Atomics atomics(CudaBackend cuda) {
        int n = 100_000;
        int[] x = new int[n];
        for (int i = 0; i < n; i++) {
            x[i] = (int) ((i * 7919L) % 101);
        }
        int[] out = {0, 0, 0, 0, 0, 0, 0, 0, 0, -1, 0, -1, -1};
        long[] total = new long[1];
        double[] dsum = new double[1];
        float[] fsum = new float[1];
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr dx = b.upload(Pointer.to(x), (long) n * Sizeof.INT);
            CUdeviceptr dout = b.upload(Pointer.to(out), (long) out.length * Sizeof.INT);
            CUdeviceptr dtotal = b.upload(Pointer.to(total), Sizeof.LONG);
            CUdeviceptr ddsum = b.upload(Pointer.to(dsum), Sizeof.DOUBLE);
            CUdeviceptr dfsum = b.upload(Pointer.to(fsum), Sizeof.FLOAT);
            cuda.launch(MODULE, "selftest_atomics", (n + 255) / 256, 256, 8 * Sizeof.INT,
                    new KernelArgs().ptr(dx).i32(n).ptr(dout).ptr(dtotal).ptr(ddsum).ptr(dfsum));
            b.download(Pointer.to(out), dout, (long) out.length * Sizeof.INT);
            b.download(Pointer.to(total), dtotal, Sizeof.LONG);
            b.download(Pointer.to(dsum), ddsum, Sizeof.DOUBLE);
            b.download(Pointer.to(fsum), dfsum, Sizeof.FLOAT);
        }
        return new Atomics(x, out, total[0], dsum[0], fsum[0]);
    }

    /** selftest_pipeline_copy: {y (the 16-byte copies), z (the 4-byte copies)} for x of 4 * n4 floats. */
    static float[][] pipeline(CudaBackend cuda, float[] x) {
        int n4 = x.length / 4;
        int threads = 128;
        float[] y = new float[x.length];
        float[] z = new float[n4];
        try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
            CUdeviceptr dx = b.upload(Pointer.to(x), (long) x.length * Sizeof.FLOAT);
            CUdeviceptr dy = b.poisoned((long) y.length * Sizeof.FLOAT);
            CUdeviceptr dz = b.poisoned((long) z.length * Sizeof.FLOAT);
            cuda.launch(MODULE, "selftest_pipeline_copy", (n4 + threads - 1) / threads, threads, threads * 20,
                    new KernelArgs().ptr(dx).ptr(dy).ptr(dz).i32(n4));
            b.download(Pointer.to(y), dy, (long) y.length * Sizeof.FLOAT);
            b.download(Pointer.to(z), dz, (long) z.length * Sizeof.FLOAT);
        }
        return new float[][] {y, z};
    }
}
