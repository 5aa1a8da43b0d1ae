package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.mechspec.compute.CpuBackend;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.KernelArgs;
import org.mechspec.spec.Contract;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;

/**
 * Two fixture papers for {@link EmulatedRunTest}'s per-paper CUDA run: in "cudafault" a kernel stores out of bounds
 * (a sticky CUDA_ERROR_ILLEGAL_ADDRESS), then a second check asks CUDA for more; "cudaok" rounds on CUDA as usual.
 * Only {@link RunWithFixtures} runs them.
 */
@Tag("launcher-fixture")
class CudaFaultFixtureContracts {
    static final String FAULT_MANIFEST = manifest("cudafault", "a_kernel_faults", "cuda_after_the_fault");
    static final String OK_MANIFEST = manifest("cudaok", "rounds_on_cuda", "rounds_again");

    private static String manifest(String paper, String first, String second) {
        return """
                {"paper": "%s", "title": "CUDA fault fixture", "seeds": [42], "dataset": {}, "protocol": {}, "claim_policy": {},
                 "limitations": [], "sources": ["src/main/java/org/mechspec/compute"],
                 "checks": [{"name": "%s", "description": "first"}, {"name": "%s", "description": "second"}],
                 "metrics": [{"name": "value"}],
                 "artifact": {"seeds": "$seeds", "per_seed": {"$each_seed": {"seed": "$seed", "metrics": {"$metrics": "*"}, "checks": "$checks"}},
                              "metrics": {"$aggregate": {"stats": ["mean", "n"], "metrics": "*"}}, "provenance": {"commit": "$commit"}}}
                """.formatted(paper, first, second);
    }

    /** Rounds three values on the run's backend and records the first. */
    private static void rounds(SeedRun run) {
        double[] x = {1.0 / 3, -1e-30, 70000};
        double[] y = run.backend().roundToHalf(x);
        run.metric("value", y[0]);
        run.check(java.util.Arrays.equals(y, CpuBackend.INSTANCE.roundToHalf(x)));
    }

    @Nested
    @Tag("cudafault")
    class Fault {
        @Contract(paper = "cudafault", check = "a_kernel_faults")
        @Seeded
        void aKernelFaults(SeedRun run) {
            CudaBackend cuda = (CudaBackend) run.backend();
            int n = 1000;
            try (CudaBackend.DeviceBuffers b = cuda.new DeviceBuffers()) {
                CUdeviceptr x = b.upload(Pointer.to(new float[n]), (long) n * Sizeof.FLOAT);
                CUdeviceptr y = b.poisoned((long) n * Sizeof.FLOAT);
                cuda.launch("emulator_selftest", "selftest_out_of_bounds", (n + 255) / 256, 256, 0, new KernelArgs().ptr(x).ptr(y).i32(n));
            }
            assertThat(run.seed()).as("unreachable: the launch faults").isNegative();
        }

        @Contract(paper = "cudafault", check = "cuda_after_the_fault")
        @Seeded
        void cudaAfterTheFault(SeedRun run) {
            rounds(run);
        }
    }

    @Nested
    @Tag("cudaok")
    class Fine {
        @Contract(paper = "cudaok", check = "rounds_on_cuda")
        @Seeded
        void roundsOnCuda(SeedRun run) {
            rounds(run);
        }

        @Contract(paper = "cudaok", check = "rounds_again")
        @Seeded
        void roundsAgain(SeedRun run) {
            rounds(run);
        }
    }
}
