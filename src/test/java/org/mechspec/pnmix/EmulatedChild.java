package org.mechspec.pnmix;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A main class of this classpath in a fresh JVM on the emulated driver, for what one JVM cannot show: the driver's
 * environment switches (read once per process) and a trace of every driver call.
 */
final class EmulatedChild {
    record Result(int exit, String output) {
    }

    private EmulatedChild() {
    }

    /** True when Maven built the emulated driver and nvcc built the kernels it runs. */
    static boolean available() {
        return emulator() != null && EmulatedChild.class.getResource("/org/mechspec/kernels/pnmix_decode.fatbin") != null;
    }

    private static Path emulator() {
        Path dir = Path.of(System.getProperty("mechspec.emulator.dir", "target/cuda-emulator")).toAbsolutePath();
        return Files.exists(dir.resolve("libcuda.so.1")) ? dir : null;
    }

    /** Runs {@code mainClass} with the emulated driver first on the library path and {@code env} added; stdout and stderr together. */
    static Result run(Map<String, String> env, String mainClass, String... args) throws IOException, InterruptedException {
        Path tmp = Files.createTempDirectory("mechspec-child");
        // C1 only: a short child run (cli/ChildMain says why).
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx1g", "-XX:TieredStopAtLevel=1", "-Djava.io.tmpdir=" + tmp, "-Dmechspec.data.dir=" + System.getProperty("mechspec.data.dir", "../shared/data"),
                "-cp", System.getProperty("java.class.path"), mainClass));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(env);
        pb.environment().put("LD_LIBRARY_PATH", emulator().toString());
        try {
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(300, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(mainClass + " did not finish in 300 s: " + out);
            }
            return new Result(p.exitValue(), out.strip());
        } finally {
            // JCuda unpacks its natives into the child's temporary folder: removed with it, nothing left in /tmp.
            try (var files = Files.walk(tmp)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }
}
