package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A paper's provenance hashes what it can execute: its manifest's {@code sources} are its package (the first
 * entry), every {@code org.mechspec} package its main classes import, transitively, and every kernel those
 * packages load by module name ({@code src/main/cuda/<module>.cu}) with the headers the kernels include.
 * So a change in one paper's code or kernels never changes another paper's hashes, and nothing a paper runs
 * is left out.
 */
@Tag("platform")
class ExecutedSourcesTest {
    private static final Path MAIN = Path.of("src/main/java/org/mechspec");
    private static final Path CUDA = Path.of("src/main/cuda");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?org\\.mechspec\\.(\\w+)\\.", Pattern.MULTILINE);
    private static final Pattern LITERAL = Pattern.compile("\"(\\w+)\"");
    private static final Pattern INCLUDE = Pattern.compile("^#include \"([\\w.]+)\"", Pattern.MULTILINE);

    @Test
    void everyManifestDeclaresExactlyWhatItsPackageExecutes() {
        List<Manifest> manifests = ManifestLoader.loadAll(Path.of(System.getProperty("mechspec.contracts.dir", "contracts")));
        assertThat(manifests).isNotEmpty();
        for (Manifest m : manifests) {
            String first = m.sources().get(0);
            assertThat(first).as("%s: the first source is the paper's package", m.paper()).startsWith("src/main/java/org/mechspec/");
            String pkg = Path.of(first).getFileName().toString();
            assertThat(new TreeSet<>(m.sources())).as("%s: sources in contracts/%s.json", m.paper(), m.paper())
                    .isEqualTo(executed(pkg));
        }
    }

    /** A package importing another pulls in that one's sources and kernels too. */
    @Test
    void theClosureFollowsImportsAndKernelModules() {
        Set<String> oal = executed("oal");
        assertThat(oal).contains("src/main/java/org/mechspec/model", "src/main/java/org/mechspec/compute",
                "src/main/cuda/oal.cu", "src/main/cuda/attention.cu");
        assertThat(oal).doesNotContain("src/main/java/org/mechspec/pnmix", "src/main/cuda/pnmix.cu",
                "src/main/java/org/mechspec/foldbias", "src/main/cuda/foldbias.cu");
    }

    /** Source paths (relative to the project root) that package {@code start} can execute. */
    static Set<String> executed(String start) {
        Set<String> packages = new TreeSet<>();
        Deque<String> todo = new ArrayDeque<>(List.of(start));
        Set<String> kernels = new TreeSet<>();
        while (!todo.isEmpty()) {
            String pkg = todo.pop();
            if (!packages.add(pkg)) {
                continue;
            }
            for (String source : javaSources(MAIN.resolve(pkg))) {
                Matcher imports = IMPORT.matcher(source);
                while (imports.find()) {
                    todo.push(imports.group(1));
                }
                Matcher literals = LITERAL.matcher(source);
                while (literals.find()) {
                    if (Files.isRegularFile(CUDA.resolve(literals.group(1) + ".cu"))) {
                        kernels.add(literals.group(1) + ".cu");
                    }
                }
            }
        }
        Set<String> out = new TreeSet<>();
        packages.forEach(p -> out.add("src/main/java/org/mechspec/" + p));
        Deque<String> files = new ArrayDeque<>(kernels);
        while (!files.isEmpty()) {
            String file = files.pop();
            if (out.add("src/main/cuda/" + file)) {
                Matcher includes = INCLUDE.matcher(read(CUDA.resolve(file)));
                while (includes.find()) {
                    files.push(includes.group(1));
                }
            }
        }
        return out;
    }

    private static List<String> javaSources(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".java")).sorted().map(ExecutedSourcesTest::read).toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + dir, e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
