package org.mechspec.spec;

import com.fasterxml.jackson.databind.JsonNode;
import io.qameta.allure.Allure;
import io.qameta.allure.model.Status;
import java.util.Locale;
import java.util.Map;
import org.mechspec.report.ClaimPolicy;

/**
 * What a contract shows a reviewer in Allure besides pass/fail: the check's meaning and threshold, each measured
 * figure against its bound as a named step (the manifest's {@code figures}), the metrics as a table, and the
 * negative-result sentence on a seed that contradicts a hypothesis.
 */
final class AllureFigures {
    private AllureFigures() {
    }

    static String description(Manifest manifest, String check) {
        Manifest.Check c = manifest.check(check);
        StringBuilder b = new StringBuilder();
        b.append(manifest.title()).append(manifest.arxivId().isBlank() ? "" : " (arXiv " + manifest.arxivId() + ")").append("\n\n");
        b.append("Check ").append(check).append(": ").append(c.description()).append('.');
        if (!Double.isNaN(c.threshold())) {
            b.append("\n\nThreshold: ").append(number(c.threshold())).append(" (contracts/").append(manifest.paper()).append(".json).");
        }
        for (JsonNode f : figures(manifest, check)) {
            b.append("\nHolds when ").append(f.path("metric").asText()).append(' ').append(f.path("op").asText()).append(' ')
                    .append(f.path("bound").asText()).append('.');
        }
        return b.toString();
    }

    /**
     * One step per declared figure: {@code minimum_output_bound_slack = 0.0069 ≥ -1e-12}, or a failed step naming a
     * figure (or a metric of its bound) the seed did not record.
     */
    static void steps(SeedRun run) {
        double threshold = run.manifest().check(run.check()).threshold();
        for (JsonNode f : figures(run.manifest(), run.check())) {
            Object v = run.metrics().get(f.path("metric").asText());
            double bound;
            try {
                bound = bound(f.path("bound").asText(), threshold, run.metrics());
            } catch (NumberFormatException e) {
                bound = Double.NaN;
            }
            if (!(v instanceof Number value) || Double.isNaN(bound)) {
                Allure.step(figure(f) + ": not recorded", Status.FAILED);
                continue;
            }
            String op = f.path("op").asText();
            boolean holds = holds(value.doubleValue(), op, bound);
            Allure.step(f.path("metric").asText() + " = " + number(value.doubleValue()) + " " + symbol(op) + " " + number(bound),
                    holds ? Status.PASSED : Status.FAILED);
        }
    }

    /**
     * Each declared figure of the run's check whose metric, or a metric its bound names, the seed did not record: a
     * figure the manifest promises is never silently absent.
     */
    static java.util.List<String> unrecorded(SeedRun run) {
        java.util.List<String> missing = new java.util.ArrayList<>();
        for (JsonNode f : figures(run.manifest(), run.check())) {
            String metric = f.path("metric").asText();
            if (!(run.metrics().get(metric) instanceof Number)) {
                missing.add(metric);
            }
            for (String factor : f.path("bound").asText().split("\\*")) {
                String name = factor.trim().replaceFirst("^-", "");
                if (run.manifest().metrics().containsKey(name) && !(run.metrics().get(name) instanceof Number)) {
                    missing.add(name + " (in the bound of " + metric + ")");
                }
            }
        }
        return missing;
    }

    private static String figure(JsonNode f) {
        return f.path("metric").asText() + " " + symbol(f.path("op").asText()) + " " + f.path("bound").asText();
    }

    static void negativeResult(SeedRun run) {
        for (String sentence : ClaimPolicy.violations(run.manifest(), Map.of(run.seed(), run.metrics()))) {
            Allure.label("tag", "negative result");
            Allure.step("Negative result: " + sentence);
        }
    }

    static String table(SeedRun run) {
        StringBuilder b = new StringBuilder("metric,value\n");
        run.metrics().forEach((k, v) -> b.append(k).append(',').append(v).append('\n'));
        return b.toString();
    }

    static Iterable<JsonNode> figures(Manifest manifest, String check) {
        for (JsonNode c : manifest.root().path("checks")) {
            if (c.path("name").asText().equals(check)) {
                return c.path("figures");
            }
        }
        return java.util.List.of();
    }

    /** A bound: a product of factors, each a number, {@code threshold}, {@code -threshold} or a recorded metric. */
    static double bound(String spec, double threshold, Map<String, Object> metrics) {
        double product = 1;
        for (String factor : spec.split("\\*")) {
            String f = factor.trim();
            if (f.equals("threshold") || f.equals("-threshold")) {
                product *= f.startsWith("-") ? -threshold : threshold;
            } else if (metrics.get(f) instanceof Number n) {
                product *= n.doubleValue();
            } else {
                product *= Double.parseDouble(f);
            }
        }
        return product;
    }

    static boolean holds(double value, String op, double bound) {
        return switch (op) {
            case "<=" -> value <= bound;
            case ">=" -> value >= bound;
            case "<" -> value < bound;
            case ">" -> value > bound;
            default -> value == bound;
        };
    }

    private static String symbol(String op) {
        return switch (op) {
            case "<=" -> "≤";
            case ">=" -> "≥";
            default -> op;
        };
    }

    private static String number(double x) {
        return x == Math.rint(x) && Math.abs(x) < 1e15 ? Long.toString((long) x) : String.format(Locale.ROOT, "%.4g", x);
    }
}
