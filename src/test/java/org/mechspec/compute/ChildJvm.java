package org.mechspec.compute;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs a main class of this classpath in a fresh JVM, for what one JVM cannot show: a driver chosen by
 * LD_LIBRARY_PATH at start, the emulated driver's environment switches, two processes contending for a device.
 */
final class ChildJvm {
    record Result(int exit, String output) {
    }

    private ChildJvm() {
    }

    /** The emulated driver built by Maven ({@code -Dmechspec.emulator.dir}), or null when it was not built. */
    static Path emulator() {
        Path dir = Path.of(System.getProperty("mechspec.emulator.dir", "target/cuda-emulator")).toAbsolutePath();
        return Files.exists(dir.resolve("libcuda.so.1")) ? dir : null;
    }

    /** The environment that puts the emulated driver first, plus extra variables. */
    static Map<String, String> emulated(Map<String, String> extra) {
        Map<String, String> env = new java.util.HashMap<>(extra);
        env.put("LD_LIBRARY_PATH", emulator().toString());
        return env;
    }

    static Result run(Map<String, String> env, String mainClass, String... args) throws IOException, InterruptedException {
        Path tmp = Files.createTempDirectory("mechspec-child");
        // C1 only: a short child run (cli/ChildMain says why).
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-Djava.io.tmpdir=" + tmp, "-Dmechspec.emulator.dir=" + System.getProperty("mechspec.emulator.dir", ""),
                "-cp", System.getProperty("java.class.path"), mainClass));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().putAll(env);
        try {
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(mainClass + " did not finish in 120 s: " + out);
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
