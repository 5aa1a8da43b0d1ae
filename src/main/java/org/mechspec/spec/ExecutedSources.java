package org.mechspec.spec;

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

/**
 * What a paper's package can execute, as a manifest's {@code sources} lists it: the package, every {@code org.mechspec}
 * package its classes import, transitively, and every kernel those packages load by module name
 * ({@code src/main/cuda/<module>.cu}) with the headers the kernels include. Paths are relative to the project root.
 */
public final class ExecutedSources {
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?org\\.mechspec\\.(\\w+)\\.", Pattern.MULTILINE);
    private static final Pattern LITERAL = Pattern.compile("\"(\\w+)\"");
    private static final Pattern INCLUDE = Pattern.compile("^#include \"([\\w.]+)\"", Pattern.MULTILINE);

    private ExecutedSources() {
    }

    /** Source paths (relative to the project root) that package {@code start} can execute. */
    public static Set<String> of(String start) {
        return of(Path.of(""), start);
    }

    /** As {@link #of(String)}, for the project at {@code root}. */
    public static Set<String> of(Path root, String start) {
        Path main = root.resolve("src/main/java/org/mechspec");
        Path cuda = root.resolve("src/main/cuda");
        Set<String> packages = new TreeSet<>();
        Deque<String> todo = new ArrayDeque<>(List.of(start));
        Set<String> kernels = new TreeSet<>();
        while (!todo.isEmpty()) {
            String pkg = todo.pop();
            if (!packages.add(pkg)) {
                continue;
            }
            for (String source : javaSources(main.resolve(pkg))) {
                Matcher imports = IMPORT.matcher(source);
                while (imports.find()) {
                    todo.push(imports.group(1));
                }
                Matcher literals = LITERAL.matcher(source);
                while (literals.find()) {
                    if (Files.isRegularFile(cuda.resolve(literals.group(1) + ".cu"))) {
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
                Matcher includes = INCLUDE.matcher(read(cuda.resolve(file)));
                while (includes.find()) {
                    files.push(includes.group(1));
                }
            }
        }
        return out;
    }

    private static List<String> javaSources(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".java")).sorted().map(ExecutedSources::read).toList();
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
