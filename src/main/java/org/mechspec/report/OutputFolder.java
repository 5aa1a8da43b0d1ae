package org.mechspec.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Where a command may write. The committed folders of a checkout or bundle ({@code reports/}, {@code contracts/},
 * {@code fixtures/}) are never an output folder, nor inside one, nor inside the output folder (a run clears stale
 * artifacts in its output); updating the references is {@code -Dmechspec.updateReports=true} alone. A folder that
 * already holds files is used only if mechspec made it (it holds {@value #MARKER}), so a run never clears a
 * stranger's files. Every refusal is one line, before anything runs.
 */
public final class OutputFolder {
    /** Left in every output folder mechspec creates, so a later run knows the folder is its own. */
    public static final String MARKER = ".mechspec-output";
    static final List<String> COMMITTED = List.of("reports", "contracts", "fixtures");
    private static final String COMMITTED_HINT = " (committed references change only with -Dmechspec.updateReports=true)";

    private OutputFolder() {
    }

    /** Why a command may not write into {@code dir} (named as the user wrote it, {@code option}), or null. */
    public static String refusal(String option, Path dir) {
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            return option + " " + dir + ": not a folder";
        }
        String committed = committedOverlap(dir);
        if (committed != null) {
            return option + " " + dir + ": refused, it " + committed + COMMITTED_HINT + "; name another folder";
        }
        if (Files.isDirectory(dir) && !Files.exists(dir.resolve(MARKER), LinkOption.NOFOLLOW_LINKS) && !empty(dir)) {
            return option + " " + dir + ": refused, a folder that holds files and was not made by mechspec (no " + MARKER
                    + " in it); name a new or empty folder";
        }
        return null;
    }

    /** Why a command may not write the file {@code file} (its {@code option}), or null: a folder, or a committed place. */
    public static String fileRefusal(String option, Path file) {
        if (Files.isDirectory(file)) {
            return option + " " + file + ": a folder; name the file to write";
        }
        String committed = committedOverlap(file);
        return committed == null ? null : option + " " + file + ": refused, it " + committed + COMMITTED_HINT
                + "; write it elsewhere and copy a checked file there when it is meant to be the reference";
    }

    /** Creates {@code dir} (refused as {@link #refusal} says) and marks it as mechspec's. */
    public static void create(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path marker = dir.resolve(MARKER);
        if (!Files.exists(marker, LinkOption.NOFOLLOW_LINKS)) {
            Files.writeString(marker, "Made by mechspec: its commands may clear and rewrite their own files here.\n");
        }
    }

    /**
     * How {@code path} meets a committed folder of a checkout or bundle ("is", "lies inside", "holds" and the folder), or
     * null when it meets none. Links are resolved first, so a link to {@code reports/} is {@code reports/}.
     */
    public static String committedOverlap(Path path) {
        Path p = real(path);
        for (Path root : roots()) {
            for (String name : COMMITTED) {
                Path c = root.resolve(name);
                if (!Files.isDirectory(c)) {
                    continue;
                }
                Path committed = real(c);
                if (p.equals(committed)) {
                    return "is the committed " + committed;
                }
                if (p.startsWith(committed)) {
                    return "lies inside the committed " + committed;
                }
                if (committed.startsWith(p)) {
                    return "holds the committed " + committed;
                }
            }
        }
        return null;
    }

    /**
     * The checkouts and bundles a command could harm: those around the working folder and around mechspec's own code
     * (a checkout holds {@code pom.xml} and {@code contracts/}; a bundle {@code bin/mechspec} and {@code fixtures/}).
     */
    static Set<Path> roots() {
        Set<Path> roots = new LinkedHashSet<>();
        List<Path> starts = new ArrayList<>();
        starts.add(Path.of("").toAbsolutePath());
        try {
            starts.add(Path.of(OutputFolder.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
        } catch (java.net.URISyntaxException | RuntimeException e) {
            // no code source (an unusual class loader): the working folder's ancestors still count
        }
        for (Path start : starts) {
            for (Path d = real(start); d != null; d = d.getParent()) {
                boolean checkout = Files.isRegularFile(d.resolve("pom.xml")) && Files.isDirectory(d.resolve("contracts"));
                boolean bundle = Files.isRegularFile(d.resolve("bin/mechspec")) && Files.isDirectory(d.resolve("fixtures"));
                if (checkout || bundle) {
                    roots.add(d);
                }
            }
        }
        return roots;
    }

    /** The path with every existing part's links resolved (a path not yet created keeps its missing tail). */
    static Path real(Path path) {
        Path abs = path.toAbsolutePath().normalize();
        Path existing = abs;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return abs;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(abs)).normalize();
        } catch (IOException e) {
            return abs; // unreadable: compared as written
        }
    }

    private static boolean empty(Path dir) {
        try (Stream<Path> s = Files.list(dir)) {
            return s.findAny().isEmpty();
        } catch (IOException e) {
            return false; // unreadable: not empty as far as anyone can tell, so refused
        }
    }
}
