package org.mechspec.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The worker exchange folders one process made (their owner.pid names it), where runs make them: /dev/shm, else the
 * temporary folder. Other runs on the machine (CI's second pass, a user's run) make folders of their own meanwhile, so a
 * test of "nothing left behind" looks only at its own process's.
 */
final class ExchangeFolders {
    private ExchangeFolders() {
    }

    static Set<Path> ownedBy(long pid) throws IOException {
        Path shm = Path.of("/dev/shm");
        Path parent = Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
        try (var s = Files.list(parent)) {
            return s.filter(d -> d.getFileName().toString().startsWith("mechspec-worker-")).filter(d -> {
                try {
                    return Files.readString(d.resolve("owner.pid")).trim().equals(Long.toString(pid));
                } catch (IOException e) {
                    return false;
                }
            }).collect(Collectors.toSet());
        }
    }

    static Set<Path> ofThisJvm() throws IOException {
        return ownedBy(ProcessHandle.current().pid());
    }
}
