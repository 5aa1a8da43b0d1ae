package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A main class in a JVM of its own, as a user runs the command: from a working folder, stdout and stderr together. */
record ChildMain(int code, String out) {
    static ChildMain run(Path workingDir, String mainClass, List<String> jvmOptions, String... args) throws IOException, InterruptedException {
        return run(workingDir, 5, mainClass, jvmOptions, args);
    }

    /** The command line of such a JVM: this one's java and class path, then {@code jvmOptions}, the main class and {@code args}. */
    static List<String> command(String mainClass, List<String> jvmOptions, String... args) {
        // C1 only: a child runs for seconds, mostly waiting on a worker or the emulated driver, and C2's compilations
        // cost it as much CPU as its own work (a pn-mix worker run on seed 42: 44.6 -> 31.2 s of user CPU).
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g",
                "-XX:TieredStopAtLevel=1", "-Djava.io.tmpdir=" + Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath(),
                "-cp", System.getProperty("java.class.path")));
        command.addAll(jvmOptions);
        command.add(mainClass);
        command.addAll(List.of(args));
        return command;
    }

    /** As above, allowing {@code minutes} (a run that judges a worker process). */
    static ChildMain run(Path workingDir, int minutes, String mainClass, List<String> jvmOptions, String... args)
            throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command(mainClass, jvmOptions, args)).directory(workingDir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(minutes, TimeUnit.MINUTES)).isTrue();
        return new ChildMain(p.exitValue(), out);
    }
}
