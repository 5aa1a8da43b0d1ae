package org.mechspec.spec;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;

/**
 * One paper's contract manifest ({@code contracts/<paper>.json}): what is checked, what is measured, and the
 * static blocks of its artifact. Built only by {@link ManifestLoader}, which validates every field.
 *
 * @param file where it was read from, for messages
 * @param artifact the artifact template (see {@code report.ArtifactRenderer})
 * @param freeKeys JSON paths whose object keys are data (file names, split names), not layout
 */
public record Manifest(
        String file,
        String paper,
        String arxivId,
        String title,
        List<Long> seeds,
        Map<String, Check> checks,
        Map<String, Metric> metrics,
        List<Hypothesis> hypotheses,
        String hypothesisCaveat,
        List<String> sources,
        String seedArtifact,
        List<String> freeKeys,
        JsonNode artifact,
        JsonNode root) {

    /**
     * The worker operations ({@code src/main/worker/PROTOCOL.md}) the paper's mechanism is built from (field
     * {@code operations}: mechspec's own by name, the paper's own as objects declaring them): an outside implementation
     * that serves none of them is not judged on this paper.
     */
    public List<String> operations() {
        List<String> out = new java.util.ArrayList<>();
        root.path("operations").forEach(n -> out.add(n.isObject() ? n.path("name").asText() : n.asText()));
        return out;
    }

    /**
     * Metrics that measure the implementation's own rounding error against an oracle (field {@code implementation_errors}):
     * their checks' bounds judge them, and another correct implementation need not reproduce mechspec's figure, so a
     * comparison of an outside implementation's run with mechspec's leaves them out.
     */
    public List<String> implementationErrors() {
        List<String> out = new java.util.ArrayList<>();
        root.path("implementation_errors").forEach(n -> out.add(n.asText()));
        return out;
    }

    /** A baseline every run reports beside the mechanism (field {@code baselines}): its name and what it does. */
    public record Baseline(String name, String description) {
    }

    /**
     * The baselines the paper declares (field {@code baselines}; none when absent): simpler mechanisms (keep the oldest
     * tokens, keep only the recent ones, a random choice) whose figures every seeded run records with
     * {@link SeedRun#baselines} and every artifact and summary shows beside the mechanism's.
     */
    public List<Baseline> baselines() {
        List<Baseline> out = new java.util.ArrayList<>();
        root.path("baselines").forEach(b -> out.add(new Baseline(b.path("name").asText(), b.path("description").asText())));
        return out;
    }

    /** Where the papers mechspec ships keep their contracts and mutants, the package of a manifest that names none. */
    public static final String DEFAULT_PACKAGE = "org.mechspec";

    /**
     * The Java package that holds the paper's mechanism, contracts and mutants (field {@code package}; default
     * {@link #DEFAULT_PACKAGE}): what the coverage rule, {@code mechspec run} and {@code mechspec stress} discover tests
     * in. A paper kept in its own repository names its own.
     */
    public String javaPackage() {
        return root.path("package").asText(DEFAULT_PACKAGE);
    }

    /** The metrics a run's summary shows, mean ± std over seeds (field {@code headline}; none when absent). */
    public List<String> headline() {
        List<String> out = new java.util.ArrayList<>();
        root.path("headline").forEach(n -> out.add(n.asText()));
        return out;
    }

    /**
     * A declared check; {@code threshold} is NaN when the check is a plain yes/no; {@code regimes} names the kinds of
     * input its property half draws (empty when it declares none), for the report's description; {@code judges} names
     * the operations of an outside implementation the check is about (empty: any it calls), so a check whose pipeline
     * called the implementation's other operations, but none of these, says "not judged" instead of "held".
     */
    public record Check(String name, double threshold, String description, List<String> regimes, List<String> judges) {
    }

    /** A declared metric and the drift tolerated against the committed reference: |a−b| ≤ abs + rel·|b|. */
    public record Metric(String name, double abs, double rel) {
        /** Whether {@code fresh} is within this metric's tolerance of {@code reference}. */
        public boolean withinTolerance(double fresh, double reference) {
            if (Double.isNaN(fresh) || Double.isNaN(reference)) {
                return Double.isNaN(fresh) && Double.isNaN(reference);
            }
            return Math.abs(fresh - reference) <= abs + rel * Math.abs(reference);
        }
    }

    /**
     * A per-seed hypothesis {@code lhs < rhs} over two metrics; {@code sentence} names a violation, with
     * {seed}, {lhs} and {rhs} filled in.
     */
    public record Hypothesis(String lhs, String rhs, String sentence) {
        /** Whether the hypothesis {@code lhs < rhs} holds for these values. */
        public boolean holds(double lhsValue, double rhsValue) {
            return lhsValue < rhsValue;
        }
    }

    /** The declared check {@code name}; a {@link ManifestException} for an undeclared one. */
    public Check check(String name) {
        Check c = checks.get(name);
        if (c == null) {
            throw new ManifestException(file + ": check '" + name + "' is not declared in 'checks'");
        }
        return c;
    }

    /** The declared metric {@code name}; a {@link ManifestException} for an undeclared one. */
    public Metric metric(String name) {
        Metric m = metrics.get(name);
        if (m == null) {
            throw new ManifestException(file + ": metric '" + name + "' is not declared in 'metrics'");
        }
        return m;
    }
}
