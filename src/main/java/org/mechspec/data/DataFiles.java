package org.mechspec.data;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Real data sets under {@code -Dmechspec.data.dir}. A missing file is a {@link MissingDataException} saying what to
 * download and where (the tests skip on it); a file whose SHA-256 differs from the pinned one is a
 * {@link DataIntegrityException}, never a silent substitute.
 */
public final class DataFiles {
    private DataFiles() {
    }

    /** The data folder, or a {@link MissingDataException} that says how to provide it. */
    public static Path dataDir() {
        String dir = System.getProperty("mechspec.data.dir", "").trim();
        if (dir.isEmpty()) {
            throw new MissingDataException("no data folder: pass -Dmechspec.data.dir=DIR (CI uses ../shared/data)");
        }
        return Path.of(dir);
    }

    /**
     * The bytes of {@code relative} under the data folder, verified against {@code sha256} (hex).
     *
     * @param source where a user gets the file, for the message when it is missing
     */
    public static byte[] verifiedBytes(String relative, String sha256, String source) {
        Path file = file(relative, source);
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

    /**
     * The file {@code relative} under the data folder, or a {@link MissingDataException} saying where to get it: every
     * reader of a data file goes through here (or {@link #verifiedBytes}), so an absent file is the same clear skip.
     */
    public static Path file(String relative, String source) {
        Path file = dataDir().resolve(relative);
        if (!Files.isRegularFile(file)) {
            throw new MissingDataException(file + " is absent: download " + source + " to " + relative
                    + " under the folder passed as -Dmechspec.data.dir");
        }
        return file;
    }

    /** The lower-case hex SHA-256 of {@code bytes}. */
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

        /** A data file whose bytes are not the pinned ones, said in one line. */
        public DataIntegrityException(String message) {
            super(message);
        }
    }

    /** A data set that is not there: the folder flag was not passed, or a file is absent from it. */
    public static final class MissingDataException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /** A data file that is not there, said in one line with where to get it. */
        public MissingDataException(String message) {
            super(message);
        }
    }
}
