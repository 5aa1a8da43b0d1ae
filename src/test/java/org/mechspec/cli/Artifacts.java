package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.mechspec.report.ArtifactRenderer;
import org.mechspec.report.PaperRun;
import org.mechspec.spec.Manifest;

/** Reading, writing and hand-breaking artifacts in tests; demo runs rendered by the real renderer. */
final class Artifacts {
    static final Map<String, String> DEMO_SOURCES = Map.of("src/main/java/org/mechspec/demo/Demo.java",
            "7f1e0d7e2a4a0d7e9c3b1f5e6a2d4c8b9e0f1a2b3c4d5e6f708192a3b4c5d6e7");

    private Artifacts() {
    }

    static ObjectNode read(Path file) {
        try {
            return (ObjectNode) SyntheticManifests.JSON.readTree(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Path write(Path file, JsonNode json) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, SyntheticManifests.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(json) + "\n");
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A copy of {@code source} at {@code target} with {@code change} applied. */
    static Path edit(Path source, Path target, Consumer<ObjectNode> change) {
        ObjectNode json = read(source);
        change.accept(json);
        return write(target, json);
    }

    /** A demo run: err grows with the seed, seed 43 contradicts the hypothesis lhs < rhs. */
    static PaperRun demoRun(String backend, long... seeds) {
        PaperRun run = new PaperRun("demo", backend);
        run.device = "test device";
        for (long seed : seeds) {
            PaperRun.SeedRecord r = run.seed(seed);
            r.metrics.put("err", seed * 1e-15);
            r.metrics.put("bytes", 1024L);
            r.metrics.put("lhs", seed == 43 ? 2.0 : 1.0);
            r.metrics.put("rhs", 1.5);
            r.runtime.put("elapsed_seconds", 0.25 * seed);
            r.datasets.put("none", "00".repeat(32));
            r.outcome("bounded", true);
            r.outcome("counted", true);
        }
        run.propertyChecks.put("bounded", true);
        return run;
    }

    static ObjectNode render(Manifest manifest, PaperRun run, String commit) {
        return new ArtifactRenderer(manifest, run, commit, DEMO_SOURCES, "Test VM 17").render();
    }

    /** Names of the files in a folder (to show nothing partial was left behind). */
    static java.util.List<String> names(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
