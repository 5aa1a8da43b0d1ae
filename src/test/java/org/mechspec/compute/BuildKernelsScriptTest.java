package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The kernels are built by whichever nvcc is on the PATH, not only one at /usr/local/bin (where the pom once looked). */
@Tag("platform")
class BuildKernelsScriptTest {
    @TempDir
    Path dir;

    @Test
    void theNvccOnThePathBuildsTheKernels() throws Exception {
        Path real = Path.of(run("bash", "-c", "command -v nvcc || ls /usr/local/cuda/bin/nvcc").strip());
        assumeTrue(Files.isExecutable(real), "no nvcc on this machine");
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Path log = dir.resolve("nvcc.log");
        Path wrapper = bin.resolve("nvcc");
        Files.writeString(wrapper, "#!/bin/sh\necho \"$@\" >> " + log + "\nexec " + real + " \"$@\"\n");
        Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path src = Files.createDirectories(dir.resolve("cuda"));
        Files.writeString(src.resolve("tiny.cu"), "extern \"C\" __global__ void tiny(float* y) { y[threadIdx.x] = 1.0f; }\n");
        Path out = dir.resolve("out");
        String printed = run("env", "PATH=" + bin + ":/usr/bin:/bin", "bash", Path.of("src/main/cuda/build-kernels.sh").toAbsolutePath()
                .toString(), out.toString(), src.toString());
        assertThat(Files.readString(log)).as(printed).contains("-fatbin", "code=sm_90", "code=compute_80", "-lineinfo");
        assertThat(FatBinary.isFatBinary(Files.readAllBytes(out.resolve("tiny.fatbin")))).isTrue();
        assertThat(Files.readString(out.resolve("kernels.json"))).contains("\"nvcc_path\": \"" + wrapper + "\"", "\"tiny\"");
    }

    private static String run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }
}
