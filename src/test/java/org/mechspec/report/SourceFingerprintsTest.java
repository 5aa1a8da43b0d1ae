package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@Tag("platform")
class SourceFingerprintsTest {
    @TempDir
    Path root;

    @Test
    void provenanceHashesWhatExecutesNotTheGuidesBesideIt() throws Exception {
        Path pkg = Files.createDirectories(root.resolve("src/main/java/org/mechspec/compute"));
        Path cuda = Files.createDirectories(root.resolve("src/main/cuda"));
        Files.writeString(pkg.resolve("Rng.java"), "class Rng {}");
        Files.writeString(pkg.resolve("README.md"), "# a guide");
        Files.writeString(cuda.resolve("attention.cu"), "__global__ void k() {}");
        Files.writeString(cuda.resolve("reductions.cuh"), "// header");
        Path out = root.resolve("sources.json");
        SourceFingerprints.main(new String[] {root.toString(), out.toString()});
        var files = new ObjectMapper().readTree(Files.readString(out)).get("files");
        assertThat(files.fieldNames()).toIterable().containsExactlyInAnyOrder("src/main/cuda/attention.cu", "src/main/cuda/reductions.cuh",
                "src/main/java/org/mechspec/compute/Rng.java");
    }
}
