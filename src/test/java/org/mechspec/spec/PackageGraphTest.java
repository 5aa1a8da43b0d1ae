package org.mechspec.spec;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The package graph reads tools → papers → framework → core, with no arrow back up: core (the numerics and data every
 * paper shares) names neither the framework nor a paper, the framework (contract model, reporter, worker protocol,
 * command) names no paper, a paper names no other paper (in its mechanism or its tests) and no tool, and nothing in
 * main names a tool: a tool (pn-mix's bench) reaches the command through {@link org.mechspec.cli.PaperCommand}.
 */
class PackageGraphTest {
    private static final Set<String> CORE = Set.of("compute", "data", "tokenize", "model");
    private static final Set<String> FRAMEWORK = Set.of("spec", "report", "worker", "cli");
    private static final Set<String> PAPERS = Set.of("kernels", "foldbias", "pnmix", "oal");
    private static final Set<String> TOOLS = Set.of("bench");
    private static final Pattern REFERENCE = Pattern.compile("\\borg\\.mechspec\\.([a-z]+)\\b");
    /** What the framework moved from src/test keeps to (a class that grows past it is split by what it does). */
    private static final int MOST_LINES = 400;

    @Test
    void everyMainPackageHasItsLayer() throws IOException {
        try (Stream<Path> dirs = Files.list(Path.of("src/main/java/org/mechspec"))) {
            assertThat(dirs.map(d -> d.getFileName().toString()).toList())
                    .as("a new package in src/main is put in a layer here")
                    .allMatch(p -> CORE.contains(p) || FRAMEWORK.contains(p) || PAPERS.contains(p) || TOOLS.contains(p));
        }
    }

    @Test
    void noArrowPointsBackUp() throws IOException {
        List<String> wrong = new ArrayList<>();
        for (String tree : List.of("src/main/java", "src/test/java")) {
            boolean main = tree.startsWith("src/main");
            try (Stream<Path> files = Files.walk(Path.of(tree, "org/mechspec"))) {
                for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java")).sorted()::iterator) {
                    String from = Path.of(tree, "org/mechspec").relativize(f).getName(0).toString();
                    Matcher m = REFERENCE.matcher(Files.readString(f));
                    while (m.find()) {
                        String to = m.group(1);
                        if (!allowed(from, to, main)) {
                            wrong.add(f + " names org.mechspec." + to);
                        }
                    }
                }
            }
        }
        assertThat(wrong).as("arrows against papers -> framework -> core").isEmpty();
    }

    @Test
    void theFrameworkKeepsItsFilesShort() throws IOException {
        List<String> long_ = new ArrayList<>();
        for (String pkg : List.of("spec", "report", "cli")) {
            try (Stream<Path> files = Files.list(Path.of("src/main/java/org/mechspec", pkg))) {
                for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                    long lines = Files.readAllLines(f).size();
                    if (lines > MOST_LINES) {
                        long_.add(f + ": " + lines + " lines");
                    }
                }
            }
        }
        assertThat(long_).as("framework files over %d lines", MOST_LINES).isEmpty();
    }

    /** Main code: the layer rule. Tests: only that a paper's tests name no other paper. */
    private static boolean allowed(String from, String to, boolean main) {
        if (from.equals(to) || !(CORE.contains(to) || FRAMEWORK.contains(to) || PAPERS.contains(to) || TOOLS.contains(to))) {
            return true;
        }
        if (TOOLS.contains(to)) {
            return !main;
        }
        if (TOOLS.contains(from)) {
            return true;
        }
        if (!main) {
            return !PAPERS.contains(from) || !PAPERS.contains(to);
        }
        if (CORE.contains(from)) {
            return CORE.contains(to);
        }
        if (FRAMEWORK.contains(from)) {
            return !PAPERS.contains(to);
        }
        return !PAPERS.contains(to);
    }
}
