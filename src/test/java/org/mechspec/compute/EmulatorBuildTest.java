package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the emulator's build refuses, one line each: a static {@code __shared__} array (it would keep the previous
 * block's values, where a GPU's are undefined) and a library math function whose GPU error the emulator does not
 * model. On a CPU without FMA instructions the build says that kernels lose nvcc's contraction.
 */
@Tag("cuda")
@Tag("emulator-process")
@Tag("platform")
class EmulatorBuildTest {
    @TempDir
    Path dir;

    @Test
    void kernelsTheEmulatorCannotRunAsAGpuWouldAreRefusedOneLineEach() throws Exception {
        assumeThat(ChildJvm.emulator()).as("the emulated driver was not built (no g++)").isNotNull();
        Path cu = Files.createDirectories(dir.resolve("cu"));
        Files.writeString(cu.resolve("static_shared.cu"), """
                extern "C" __global__ void reads_static_shared(float* y) {
                    __shared__ float tile[64];
                    tile[threadIdx.x] = (float) threadIdx.x;
                    __syncthreads();
                    y[threadIdx.x] = tile[63 - threadIdx.x];
                }
                """);
        Files.writeString(cu.resolve("sine.cu"), """
                extern "C" __global__ void takes_sine(float* y) { y[threadIdx.x] = sinf(y[threadIdx.x]); }
                """);
        // A CPU without FMA instructions: no "fma" among the flags.
        Path cpuinfo = Files.writeString(dir.resolve("cpuinfo"), "flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx\n");
        ProcessBuilder pb = new ProcessBuilder("bash", Path.of("src/test/emulator/build.sh").toString(),
                dir.resolve("out").toString(), cu.toString()).redirectErrorStream(true);
        pb.environment().put("EMU_BUILD_CPUINFO", cpuinfo.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("build.sh finishes").isTrue();
        assertThat(p.exitValue()).as(out).isEqualTo(1);
        List<String> lines = out.lines().toList();
        assertThat(lines).as(out).containsExactlyInAnyOrder(
                "build.sh: NOTE: this CPU has no FMA instructions (no 'fma' flag in " + cpuinfo + "): kernels are compiled"
                        + " without nvcc's multiply-add contraction, so this emulator cannot show what contraction does",
                "build.sh: " + cu.resolve("static_shared.cu") + ": static __shared__ array 'tile' is not supported by the"
                        + " emulator (a block would see the previous block's values): use extern __shared__ (dynamic shared"
                        + " memory, poisoned for every block)",
                "build.sh: " + cu.resolve("sine.cu") + ": the kernels call sinf, whose GPU error the emulator does not"
                        + " model: add it to src/test/emulator/math.cpp and MODELLED_MATH in build.sh");
        assertThat(dir.resolve("out/libcuda.so.1")).as("nothing is left to load").doesNotExist();
    }
}
