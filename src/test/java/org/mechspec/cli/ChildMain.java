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

    /** As above, allowing {@code minutes} (a run that judges a worker process). */
    static ChildMain run(Path workingDir, int minutes, String mainClass, List<String> jvmOptions, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g",
                "-Djava.io.tmpdir=" + Path.of(System.getProperty("java.io.tmpdir")).toAbsolutePath(),
                "-cp", System.getProperty("java.class.path")));
        command.addAll(jvmOptions);
        command.add(mainClass);
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(workingDir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(minutes, TimeUnit.MINUTES)).isTrue();
        return new ChildMain(p.exitValue(), out);
    }
}
