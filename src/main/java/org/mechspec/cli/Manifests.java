package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestException;
import org.mechspec.spec.ManifestLoader;

/**
 * The manifests the command knows: those of a folder ({@code --contracts DIR}) or, by default, those built into the
 * jar ({@code contracts/*.json} on the classpath). Also tells which paper an artifact belongs to.
 */
final class Manifests {
    private final Map<String, Manifest> byPaper = new TreeMap<>();
    private final String origin;

    private Manifests(String origin) {
        this.origin = origin;
    }

    /** The manifests the contracts read: {@code -Dmechspec.contracts.dir} when set, else the classpath's. */
    static Manifests contracts() {
        String dir = System.getProperty("mechspec.contracts.dir", "");
        return dir.isBlank() ? classpath() : folder(Path.of(dir));
    }

    static Manifests from(Path dirOrNull) {
        return dirOrNull == null ? classpath() : folder(dirOrNull);
    }

    static Manifests folder(Path dir) {
        if (!Files.isDirectory(dir)) {
            throw new InputException(dir + ": no such contracts folder");
        }
        Manifests m = new Manifests(dir.toString());
        try {
            ManifestLoader.loadAll(dir).forEach(manifest -> m.byPaper.put(manifest.paper(), manifest));
        } catch (ManifestException e) {
            throw new InputException(e.getMessage());
        }
        return m;
    }

    /** The manifests built into the jar (or target/classes) that holds the platform. */
    static Manifests classpath() {
        Manifests m = new Manifests("the classpath (contracts/)");
        for (String name : classpathManifestNames()) {
            String resource = "contracts/" + name;
            try (InputStream in = Manifests.class.getClassLoader().getResourceAsStream(resource)) {
                if (in != null) {
                    String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                    Manifest manifest = ManifestLoader.parse(resource, text);
                    m.byPaper.put(manifest.paper(), manifest);
                }
            } catch (ManifestException e) {
                throw new InputException(e.getMessage());
            } catch (IOException e) {
                throw new InputException(resource + ": cannot read: " + e.getMessage());
            }
        }
        return m;
    }

    private static List<String> classpathManifestNames() {
        List<String> names = new ArrayList<>();
        try {
            Path root = Path.of(ManifestLoader.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (Files.isDirectory(root)) {
                Path dir = root.resolve("contracts");
                if (Files.isDirectory(dir)) {
                    try (Stream<Path> files = Files.list(dir)) {
                        files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".json")).forEach(names::add);
                    }
                }
            } else {
                try (JarFile jar = new JarFile(root.toFile())) {
                    jar.stream().map(e -> e.getName())
                            .filter(n -> n.startsWith("contracts/") && n.endsWith(".json") && n.indexOf('/', 10) < 0)
                            .forEach(n -> names.add(n.substring("contracts/".length())));
                }
            }
        } catch (IOException | URISyntaxException | RuntimeException e) {
            throw new InputException("cannot list the manifests on the classpath: " + e.getMessage());
        }
        names.sort(null);
        return names;
    }

    List<String> papers() {
        return List.copyOf(byPaper.keySet());
    }

    Manifest forPaper(String paper) {
        Manifest m = byPaper.get(paper);
        if (m == null) {
            throw new InputException("unknown paper '" + paper + "': no manifest in " + origin + " (known: "
                    + String.join(", ", byPaper.keySet()) + ")");
        }
        return m;
    }

    /**
     * The manifest of an artifact: from its {@code mechspec.paper}, else the seed-file conventions ({@code method},
     * {@code paper.key}, the {@code manifest_ref} suffix, or an arXiv id matching a manifest's {@code arxiv_id}).
     */
    Manifest forArtifact(ArtifactFile artifact) {
        JsonNode a = artifact.json();
        List<String> names = new ArrayList<>();
        add(names, a.path("mechspec").path("paper"));
        add(names, a.path("method"));
        add(names, a.path("paper").path("key"));
        add(names, a.path("paper"));
        JsonNode ref = a.path("manifest_ref");
        if (ref.isTextual()) {
            names.add(ref.asText().substring(ref.asText().lastIndexOf(':') + 1));
        }
        add(names, a.path("arxiv_id"));
        add(names, a.path("manifest").path("arxiv_id"));
        if (names.isEmpty()) {
            throw new InputException(artifact.path() + ": cannot tell the paper: no mechspec.paper, method, paper.key,"
                    + " manifest_ref or arXiv id");
        }
        for (String name : names) {
            if (byPaper.containsKey(name)) {
                return byPaper.get(name);
            }
            for (Manifest m : byPaper.values()) {
                if (!m.arxivId().isBlank() && m.arxivId().equals(name)) {
                    return m;
                }
            }
        }
        throw new InputException(artifact.path() + ": unknown paper: no manifest in " + origin + " for "
                + String.join(" or ", new java.util.LinkedHashSet<>(names)) + " (known: " + String.join(", ", byPaper.keySet()) + ")");
    }

    private static void add(List<String> names, JsonNode n) {
        if (n.isTextual() && !n.asText().isBlank()) {
            names.add(n.asText());
        }
    }
}
