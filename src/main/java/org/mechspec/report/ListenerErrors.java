package org.mechspec.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The reporter's own failures, which JUnit would only log: the listener writes them to {@value #FILE} beside the
 * artifacts, and the build's report gate and {@code mechspec run} fail on them.
 */
public final class ListenerErrors {
    public static final String FILE = "mechspec-errors.txt";

    private ListenerErrors() {
    }

    /** The error lines of the last run whose artifacts went to {@code dir}; empty when it had none. */
    public static List<String> read(Path dir) throws IOException {
        Path file = dir.resolve(FILE);
        return Files.exists(file) ? Files.readAllLines(file) : List.of();
    }
}
