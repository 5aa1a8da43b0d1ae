package org.mechspec.spec;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What each check is known to reject: the broken mechanisms its {@link Breaks} tests build, one line each (the
 * description, else the test's name in words, and its class), and the wrong outside implementations of the judge's corpus it rejects in CI, so a
 * reader of a verdict sees what "true" rules out. Found once per JVM.
 */
public final class KnownRejections {
    private static final Map<String, List<String>> byMutant = new TreeMap<>();
    private static Map<String, List<String>> byCorpus;
    private static final List<String> SCANNED = new ArrayList<>();

    private KnownRejections() {
    }

    /** The lines for {@code paper}/{@code check}, in test order; empty when none is found (a bundle without tests). */
    public static synchronized List<String> of(String paper, String check) {
        if (byCorpus == null) {
            byCorpus = new TreeMap<>();
            corpus().forEach(line -> byCorpus.computeIfAbsent(line[0], k -> new ArrayList<>()).add(line[1]));
        }
        // The mutants are found where the paper's manifest says its tests are, each package scanned once.
        String pkg = ManifestLoader.forPaper(paper).javaPackage();
        if (SCANNED.stream().noneMatch(p -> pkg.equals(p) || pkg.startsWith(p + "."))) {
            SCANNED.add(pkg);
            for (Method m : ContractCoverage.discoveredTestMethods(List.of(pkg))) {
                for (Breaks b : m.getAnnotationsByType(Breaks.class)) {
                    byMutant.computeIfAbsent(b.paper() + "/" + b.check(), k -> new ArrayList<>()).add(line(m, b));
                }
            }
        }
        List<String> out = new ArrayList<>(byMutant.getOrDefault(paper + "/" + check, List.of()));
        out.addAll(byCorpus.getOrDefault(paper + "/" + check, List.of()));
        return out;
    }

    /**
     * The judge's corpus of wrong outside implementations (src/test/worker/corpus/corpus.json, on the test classpath):
     * {paper/check, "outside implementation: bug class (file; source)"} for each check that rejects one in CI.
     */
    private static List<String[]> corpus() {
        List<String[]> out = new ArrayList<>();
        try (java.io.InputStream in = KnownRejections.class.getClassLoader().getResourceAsStream("org/mechspec/corpus/corpus.json")) {
            if (in == null) {
                return out;
            }
            for (com.fasterxml.jackson.databind.JsonNode e : new com.fasterxml.jackson.databind.ObjectMapper().readTree(in)) {
                String source = e.path("source").asText("");
                for (com.fasterxml.jackson.databind.JsonNode check : e.path("rejected_by")) {
                    out.add(new String[] {e.path("paper").asText() + "/" + check.asText(), "outside implementation: " + e.path("bug_class").asText()
                            + " (" + e.path("file").asText() + (source.isBlank() ? "" : "; " + source) + ")"});
                }
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException("the judge's corpus list is unreadable", e);
        }
        return out;
    }

    /** A mutant's line: its description, else its method's name in words, and its class. */
    static String line(Method mutant, Breaks b) {
        return (b.description().isBlank() ? words(mutant.getName()) : b.description()) + " (" + mutant.getDeclaringClass().getSimpleName() + ")";
    }

    /** {@code flippedFoldSignBreaksTheLogitIdentity} → "flipped fold sign breaks the logit identity". */
    static String words(String camel) {
        return camel.replaceAll("([a-z0-9])([A-Z])", "$1 $2").replaceAll("([A-Z]+)([A-Z][a-z])", "$1 $2").replace('_', ' ')
                .toLowerCase(java.util.Locale.ROOT);
    }
}
