package org.mechspec.model;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Collection;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.mechspec.data.DataFiles.DataIntegrityException;
import org.mechspec.data.DataFiles.MissingDataException;

/**
 * SHA-256 of the files of a checkpoint folder: checked against pinned values before anything is loaded, and
 * reported for an artifact's checkpoint block. Files are hashed as streams, so a 1 GB model.safetensors is never
 * held in memory. Names are relative to the folder; files the map does not name (README.md, LICENSE) are ignored.
 */
public final class CheckpointHashes {
    private static final int BUFFER_BYTES = 1 << 20;

    private CheckpointHashes() {
    }

    /**
     * Checks that every file {@code expectedSha256} names (relative name → lowercase or uppercase hex) is in
     * {@code dir} with that SHA-256; returns the verified hashes, sorted by name. Every file's presence is
     * checked before any is hashed, so an absent file is reported without reading a gigabyte first.
     *
     * @throws MissingDataException naming the first absent file
     * @throws DataIntegrityException naming the first file (by name) whose bytes differ, with both hashes
     */
    public static Map<String, String> require(Path dir, Map<String, String> expectedSha256) {
        Map<String, String> expected = new TreeMap<>();
        expectedSha256.forEach((name, hash) -> {
            requireHex(name, hash);
            expected.put(name, hash.toLowerCase(Locale.ROOT));
        });
        for (String name : expected.keySet()) {
            Path file = fileIn(dir, name);
            if (!Files.isRegularFile(file)) {
                throw new MissingDataException(file + " is absent: the checkpoint folder " + dir
                        + " must hold every pinned file " + expected.keySet());
            }
        }
        for (Map.Entry<String, String> e : expected.entrySet()) {
            Path file = fileIn(dir, e.getKey());
            String actual = sha256(file);
            if (!actual.equals(e.getValue())) {
                throw new DataIntegrityException(file + " has SHA-256 " + actual + ", expected " + e.getValue()
                        + ": not the pinned checkpoint file");
            }
        }
        return expected;
    }

    /** The SHA-256 (lowercase hex) of each named file of {@code dir}, sorted by name. */
    public static Map<String, String> of(Path dir, Collection<String> names) {
        Map<String, String> out = new TreeMap<>();
        for (String name : names) {
            out.put(name, sha256(fileIn(dir, name)));
        }
        return out;
    }

    /** The SHA-256 of every file {@link Checkpoint#load} reads from {@code dir}: what an artifact records. */
    public static Map<String, String> ofLoadedFiles(Path dir) {
        return of(dir, Checkpoint.filesLoaded(dir));
    }

    /** SHA-256 of one file, read in pieces. */
    public static String sha256(Path file) {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] buffer = new byte[BUFFER_BYTES];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                digest.update(buffer, 0, n);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /** The file {@code name} inside {@code dir}; a name reaching outside it is refused. */
    private static Path fileIn(Path dir, String name) {
        Path file = dir.resolve(name).normalize();
        if (Path.of(name).isAbsolute() || !file.startsWith(dir.normalize())) {
            throw new IllegalArgumentException("checkpoint file name '" + name + "' is not inside " + dir);
        }
        return file;
    }

    private static void requireHex(String name, String hash) {
        if (hash == null || !hash.matches("[0-9a-fA-F]{64}")) {
            throw new IllegalArgumentException("pinned SHA-256 of '" + name + "' is not 64 hex digits: " + hash);
        }
    }
}
