package org.mechspec.data;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.opentest4j.TestAbortedException;

/**
 * Real data sets under {@code -Dmechspec.data.dir}. A missing file makes the caller's test skip with what to
 * download and where; a file whose SHA-256 differs from the pinned one is an error, never a silent substitute.
 */
public final class DataFiles {
    private DataFiles() {
    }

    /** The data folder, or a skip that says how to provide it. */
    public static Path dataDir() {
        String dir = System.getProperty("mechspec.data.dir", "").trim();
        if (dir.isEmpty()) {
            throw new TestAbortedException("no data folder: pass -Dmechspec.data.dir=DIR (CI uses ../shared/data)");
        }
        return Path.of(dir);
    }

    /**
     * The bytes of {@code relative} under the data folder, verified against {@code sha256} (hex).
     *
     * @param source where a user gets the file, for the skip message
     */
    public static byte[] verifiedBytes(String relative, String sha256, String source) {
        Path file = dataDir().resolve(relative);
        if (!Files.isRegularFile(file)) {
            throw new TestAbortedException(file + " is absent: download " + source + " to " + relative
                    + " under the folder passed as -Dmechspec.data.dir");
        }
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        String actual = sha256(bytes);
        if (!actual.equalsIgnoreCase(sha256)) {
            throw new DataIntegrityException(file + " has SHA-256 " + actual + ", expected " + sha256
                    + ": wrong or corrupted file, replace it with " + source);
        }
        return bytes;
    }

    public static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A data file that is present but not the pinned bytes. */
    public static final class DataIntegrityException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public DataIntegrityException(String message) {
            super(message);
        }
    }
}
