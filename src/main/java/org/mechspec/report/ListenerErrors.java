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
    /** The file in a run's reports folder that holds the listener's errors, one per line. */
    public static final String FILE = "mechspec-errors.txt";
    /** One line per data set a test was skipped for (its file and the flag to pass), written by the listener. */
    public static final String MISSING_DATA_FILE = "mechspec-missing-data.txt";

    /**
     * Written by the listener when the run judged an outside implementation: its id on the first line, then each
     * operation it declared. The gate then wants its artifacts, not mechspec's own.
     */
    public static final String IMPLEMENTATION_FILE = "mechspec-implementation.txt";

    private ListenerErrors() {
    }

    /** The error lines of the last run whose artifacts went to {@code dir}; empty when it had none. */
    public static List<String> read(Path dir) throws IOException {
        return lines(dir.resolve(FILE));
    }

    /** The missing-data lines of the last run whose artifacts went to {@code dir}. */
    public static List<String> missingData(Path dir) throws IOException {
        return lines(dir.resolve(MISSING_DATA_FILE));
    }

    /** The implementation the last run in {@code dir} judged: its id, then its operations; empty for mechspec's own. */
    public static List<String> implementation(Path dir) throws IOException {
        return lines(dir.resolve(IMPLEMENTATION_FILE));
    }

    private static List<String> lines(Path file) throws IOException {
        return Files.exists(file) ? Files.readAllLines(file) : List.of();
    }
}
