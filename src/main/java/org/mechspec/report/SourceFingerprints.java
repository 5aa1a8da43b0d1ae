package org.mechspec.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.mechspec.data.DataFiles;

/**
 * Build step (process-classes) and runtime lookup of what was executed: the git commit and the SHA-256 of
 * every main source and kernel ({@code .java}, {@code .cu}, {@code .cuh}), stored in the jar as
 * {@code META-INF/mechspec/sources.json}.
 */
public final class SourceFingerprints {
    static final String RESOURCE = "META-INF/mechspec/sources.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    private SourceFingerprints() {
    }

    /** args: project root, output file. */
    public static void main(String[] args) throws IOException {
        Path root = Path.of(args[0]);
        Map<String, String> files = new TreeMap<>();
        for (String dir : List.of("src/main/java", "src/main/cuda")) {
            Path base = root.resolve(dir);
            if (!Files.isDirectory(base)) {
                continue;
            }
            try (Stream<Path> walk = Files.walk(base)) {
                // What executes: sources and kernels, not the guides beside them (compute/README.md).
                for (Path p : (Iterable<Path>) walk.filter(Files::isRegularFile)
                        .filter(f -> f.toString().matches(".*\\.(java|cu|cuh)$")).sorted()::iterator) {
                    files.put(root.relativize(p).toString().replace('\\', '/'), DataFiles.sha256(Files.readAllBytes(p)));
                }
            }
        }
        ObjectNode out = JSON.createObjectNode();
        out.put("commit", gitCommit(root));
        out.set("files", JSON.valueToTree(files));
        AtomicFiles.write(Path.of(args[1]), JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out));
    }

    /** HEAD's commit, with "-dirty" when the work tree differs from it; "unknown" without git. */
    static String gitCommit(Path root) {
        try {
            String head = run(root, "git", "rev-parse", "HEAD");
            if (head.isEmpty()) {
                return "unknown";
            }
            String status = run(root, "git", "status", "--porcelain", "--untracked-files=no");
            return status.isEmpty() ? head : head + "-dirty";
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static String run(Path dir, String... command) throws IOException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        try (InputStream in = p.getInputStream()) {
            String out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                return "";
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "";
        }
    }

    /** The fingerprints recorded at build time: commit and path → SHA-256. */
    public record Recorded(String commit, Map<String, String> files) {
        /** Files under any of the given path prefixes (a folder or a single file). */
        public Map<String, String> under(List<String> prefixes) {
            Map<String, String> out = new TreeMap<>();
            files.forEach((path, sha) -> {
                for (String prefix : prefixes) {
                    if (path.equals(prefix) || path.startsWith(prefix.endsWith("/") ? prefix : prefix + "/")) {
                        out.put(path, sha);
                    }
                }
            });
            return out;
        }
    }

    /** The fingerprints this build recorded (commit "unknown" and no files when it recorded none). */
    public static Recorded recorded() {
        try (InputStream in = SourceFingerprints.class.getClassLoader().getResourceAsStream(RESOURCE)) {
            if (in == null) {
                return new Recorded("unknown", Map.of());
            }
            var tree = JSON.readTree(in);
            Map<String, String> files = new TreeMap<>();
            tree.path("files").fields().forEachRemaining(e -> files.put(e.getKey(), e.getValue().asText()));
            return new Recorded(tree.path("commit").asText("unknown"), files);
        } catch (IOException e) {
            return new Recorded("unknown", Map.of());
        }
    }
}
