package org.mechspec.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;

/**
 * Writes a file by temp file + rename in the same folder, so a crash never leaves half a file. The file gets the
 * permissions of any new file (the umask's default, e.g. 0644): {@code Files.createTempFile} would make it 0600, and
 * artifacts and reports are meant to be read by others.
 */
public final class AtomicFiles {
    private static final SecureRandom RANDOM = new SecureRandom();

    private AtomicFiles() {
    }

    /** Writes {@code content} to {@code target} through a temporary file and a rename: the file is whole or untouched. */
    public static void write(Path target, String content) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = null;
        try {
            for (int attempt = 0; tmp == null; attempt++) {
                Path candidate = dir.resolve("." + target.getFileName() + "." + Long.toUnsignedString(RANDOM.nextLong(), 36) + ".tmp");
                try {
                    Files.newOutputStream(candidate, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
                    tmp = candidate;
                } catch (FileAlreadyExistsException e) {
                    if (attempt >= 100) {
                        throw e;
                    }
                }
            }
            Files.writeString(tmp, content, StandardCharsets.UTF_8);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
            if (tmp != null) {
                Files.deleteIfExists(tmp);
            }
        }
    }
}
