package org.mechspec.spec;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A check's declared figures ({@code figures} in the manifest: metric, comparison, bound) evaluated on recorded
 * metrics. This is the assertion of {@link SeedRun#check()} and the judge of a property example, so each comparison is
 * written once, in the manifest.
 */
public final class Figures {
    private Figures() {
    }

    /**
     * The largest |a[i] - b[i]|, the usual figure of an output against its definition: +∞ when the lengths differ or a
     * difference is NaN, so a wrong shape or a NaN never reads as a small error.
     */
    public static double maxAbsDifference(double[] a, double[] b) {
        if (a.length != b.length) {
            return Double.POSITIVE_INFINITY;
        }
        double m = 0;
        for (int i = 0; i < a.length; i++) {
            double d = Math.abs(a[i] - b[i]);
            m = Double.isNaN(d) ? Double.POSITIVE_INFINITY : Math.max(m, d);
        }
        return m;
    }

    /** One figure on one seed or example: {@code value op bound}; a metric not recorded is NaN and never holds. */
    public record Outcome(String metric, double value, String op, double bound) {
        /** Whether {@code value op bound} holds. */
        public boolean holds() {
            return !Double.isNaN(value) && !Double.isNaN(bound) && Figures.holds(value, op, bound);
        }

        /**
         * How far the figure is from failing, in units of its bound's scale: positive holds, zero at the bound, negative
         * fails ({@code (bound - value) / max(|bound|, |value|, tiny)} for {@code <=}, mirrored for {@code >=}; an
         * equality is 1 when it holds exactly, -1 otherwise).
         */
        public double margin() {
            if (Double.isNaN(value) || Double.isNaN(bound)) {
                return Double.NEGATIVE_INFINITY;
            }
            double scale = Math.max(Double.MIN_NORMAL, Math.max(Math.abs(bound), Math.abs(value)));
            return switch (op) {
                case "<=", "<" -> (bound - value) / scale;
                case ">=", ">" -> (value - bound) / scale;
                default -> value == bound ? 1 : -1;
            };
        }

        /**
         * The figure as it fails, to lead a failure message: the comparison that holds instead of the one required
         * ({@code nnls_kkt_violation = 0.06600 > 1.000e-10}); as {@link #line()} when a value is missing.
         */
        public String failingLine() {
            if (Double.isNaN(value) || Double.isNaN(bound)) {
                return line();
            }
            String negated = switch (op) {
                case "<=" -> ">";
                case "<" -> "≥";
                case ">=" -> "<";
                case ">" -> "≤";
                default -> "≠";
            };
            return metric + " = " + number(value) + " " + negated + " " + number(bound);
        }

        /** The figure as Allure's step shows it: {@code metric = value op bound}. */
        public String line() {
            return metric + " = " + (Double.isNaN(value) ? "not recorded" : number(value)) + " " + symbol(op) + " "
                    + (Double.isNaN(bound) ? "(a metric of the bound was not recorded)" : number(bound));
        }
    }

    /** Every declared figure of {@code check} on {@code metrics} (empty when the check declares none). */
    public static List<Outcome> evaluate(Manifest manifest, String check, Map<String, ?> metrics) {
        double threshold = manifest.check(check).threshold();
        List<Outcome> out = new ArrayList<>();
        for (JsonNode f : declared(manifest, check)) {
            String metric = f.path("metric").asText();
            double value = metrics.get(metric) instanceof Number n ? n.doubleValue() : Double.NaN;
            double bound;
            try {
                bound = bound(f.path("bound").asText(), threshold, metrics);
            } catch (NumberFormatException e) {
                bound = Double.NaN;
            }
            out.add(new Outcome(metric, value, f.path("op").asText(), bound));
        }
        return out;
    }

    /**
     * Each declared figure of {@code check} whose metric, or a metric its bound names, {@code metrics} lacks: a figure
     * the manifest promises is never silently absent.
     */
    public static List<String> unrecorded(Manifest manifest, String check, Map<String, ?> metrics) {
        List<String> missing = new ArrayList<>();
        for (JsonNode f : declared(manifest, check)) {
            String metric = f.path("metric").asText();
            if (!(metrics.get(metric) instanceof Number)) {
                missing.add(metric);
            }
            for (String factor : f.path("bound").asText().split("\\*")) {
                String name = factor.trim().replaceFirst("^-", "");
                if (manifest.metrics().containsKey(name) && !(metrics.get(name) instanceof Number)) {
                    missing.add(name + " (in the bound of " + metric + ")");
                }
            }
        }
        return missing;
    }

    /** Whether every declared figure holds (false when the check declares none: nothing was judged). */
    public static boolean hold(Manifest manifest, String check, Map<String, ?> metrics) {
        List<Outcome> o = evaluate(manifest, check, metrics);
        return !o.isEmpty() && o.stream().allMatch(Outcome::holds);
    }

    /** Whether every declared figure holds on a protocol's result record (a mutant test's judgement, as the seeded half's). */
    public static boolean hold(Manifest manifest, String check, Record measured) {
        return hold(manifest, check, metricsOf(manifest, measured));
    }

    /**
     * The components of {@code measured} whose snake_case names are declared metrics ({@code keyBytes} → {@code
     * key_bytes}), as Long (integral), Double or Boolean; other components (arrays, intermediates) are left out. Naming
     * none, or holding a declared metric that is neither a number nor a boolean, is an error.
     */
    public static Map<String, Object> metricsOf(Manifest manifest, Record measured) {
        Map<String, Object> out = new java.util.LinkedHashMap<>();
        for (java.lang.reflect.RecordComponent c : measured.getClass().getRecordComponents()) {
            String name = c.getName().replaceAll("([a-z0-9])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
            if (!manifest.metrics().containsKey(name)) {
                continue;
            }
            Object v;
            try {
                c.getAccessor().setAccessible(true);
                v = c.getAccessor().invoke(measured);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot read " + c.getName() + " of " + measured.getClass().getSimpleName(), e);
            }
            if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
                out.put(name, ((Number) v).longValue());
            } else if (v instanceof Number n) {
                out.put(name, n.doubleValue());
            } else if (v instanceof Boolean) {
                out.put(name, v);
            } else {
                throw new IllegalStateException(measured.getClass().getSimpleName() + "." + c.getName() + " is declared metric '" + name
                        + "' but holds " + (v == null ? "null" : v.getClass().getSimpleName()) + ", not a number or boolean");
            }
        }
        if (out.isEmpty()) {
            throw new IllegalStateException(measured.getClass().getSimpleName() + " has no component named like a metric of "
                    + manifest.paper() + " " + manifest.metrics().keySet());
        }
        return out;
    }

    static Iterable<JsonNode> declared(Manifest manifest, String check) {
        for (JsonNode c : manifest.root().path("checks")) {
            if (c.path("name").asText().equals(check)) {
                return c.path("figures");
            }
        }
        return List.of();
    }

    /** A bound: a product of factors, each a number, {@code threshold}, {@code -threshold} or a recorded metric. */
    static double bound(String spec, double threshold, Map<String, ?> metrics) {
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

    static String symbol(String op) {
        return switch (op) {
            case "<=" -> "≤";
            case ">=" -> "≥";
            default -> op;
        };
    }

    static String number(double x) {
        return x == Math.rint(x) && Math.abs(x) < 1e15 ? Long.toString((long) x) : String.format(Locale.ROOT, "%.4g", x);
    }
}
