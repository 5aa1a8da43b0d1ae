package org.mechspec.worker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;

/**
 * The private folder tensors go through ({@code PROTOCOL.md}): mode 0700, under {@code /dev/shm} where it exists, else
 * the system temporary folder, with an {@code owner.pid} naming the JVM that made it, so that a later run removes a
 * folder whose run was killed outright (SIGKILL runs no shutdown hook).
 */
final class ExchangeFolder {
    private static final String PREFIX = "mechspec-worker-";
    private static final String OWNER = "owner.pid";

    private ExchangeFolder() {
    }

    static Path create() {
        try {
            Path shm = Path.of("/dev/shm");
            Path parent = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
            removeOrphans(parent);
            Path dir = Files.createTempDirectory(parent, PREFIX, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            Files.writeString(dir.resolve(OWNER), Long.toString(ProcessHandle.current().pid()));
            return dir;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the worker's exchange folder", e);
        }
    }

    /** Removes {@code dir} and everything in it (links themselves, never what they point to); quiet when it is gone. */
    static void remove(Path dir) {
        try (var s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // Nothing to remove.
        }
    }

    /**
     * Folders whose owner pid is no longer a process. Folders of live runs, and folders without an owner file (another
     * user's, an older mechspec's), are left alone.
     */
    private static void removeOrphans(Path parent) {
        try (var s = Files.list(parent)) {
            for (Path d : s.filter(p -> p.getFileName().toString().startsWith(PREFIX)).toList()) {
                try {
                    if (ProcessHandle.of(Long.parseLong(Files.readString(d.resolve(OWNER)).trim())).isEmpty()) {
                        remove(d);
                    }
                } catch (IOException | NumberFormatException e) {
                    // Not ours to judge.
                }
            }
        } catch (IOException e) {
            // The parent cannot be listed: nothing to tidy.
        }
    }
}
