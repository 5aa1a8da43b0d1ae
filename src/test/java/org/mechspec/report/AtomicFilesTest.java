package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Artifacts are written atomically and readable by others: mode 0600 (a temp file's) kept them from CI's readers. */
@Tag("platform")
class AtomicFilesTest {
    @TempDir
    Path dir;

    @Test
    void aWrittenFileHasTheModeOfAnyNewFileNotATempFilesMode() throws Exception {
        assumeTrue(FileSystems.getDefault().supportedFileAttributeViews().contains("posix"), "POSIX permissions");
        Set<PosixFilePermission> umaskDefault = Files.getPosixFilePermissions(Files.createFile(dir.resolve("plain")));
        Path artifact = dir.resolve("reports/demo.cpu.json");
        AtomicFiles.write(artifact, "{}\n");
        assertThat(Files.readString(artifact)).isEqualTo("{}\n");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(artifact))).isEqualTo(PosixFilePermissions.toString(umaskDefault));
        AtomicFiles.write(artifact, "{\"again\": true}\n"); // replacing keeps it so
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(artifact))).isEqualTo(PosixFilePermissions.toString(umaskDefault));
        assumeTrue(umaskDefault.contains(PosixFilePermission.OTHERS_READ), "a umask that lets others read new files");
        assertThat(Files.getPosixFilePermissions(artifact)).contains(PosixFilePermission.OTHERS_READ, PosixFilePermission.GROUP_READ);
    }

    @Test
    void noTempFileIsLeftBehind() throws Exception {
        AtomicFiles.write(dir.resolve("a.json"), "1");
        AtomicFiles.write(dir.resolve("a.json"), "2");
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactly("a.json");
        }
    }
}
