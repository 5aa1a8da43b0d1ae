package org.mechspec.spec;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.mechspec.report.AtomicFiles;

/**
 * How close each property came to failing. {@code -Dmechspec.propertyExamples=N} gives every property half N generated
 * examples ({@link #examples}); a property reports each example's figure with {@link #figure}, and the ledger keeps per
 * check the figures reported, the worst margin (figure against bound, {@link Figures.Outcome#margin}) and the input
 * that came closest. A falsified property keeps QuickTheories' shrunk counterexample and the replay seed. The reporter
 * writes one file per paper to {@code target/mechspec/stress/} after such a run; {@code mechspec stress} prints it.
 */
public final class Stress {
    /** The property half running on this thread (set by {@link ContractExtension}): paper and check. */
    private static final ThreadLocal<String[]> CURRENT = new ThreadLocal<>();
    private static final Map<String, Entry> LEDGER = new TreeMap<>();

    private Stress() {
    }

    /** One check's record under stress. */
    public static final class Entry {
        /** Figures reported. */
        public long figures;
        /** The smallest margin of a figure to its bound (negative: one failed). */
        public double worstMargin = Double.POSITIVE_INFINITY;
        /** The figure with that margin, as {@code metric = value op bound}. */
        public String worstFigure = "";
        /** |bound − value| of the worst figure: between equal margins (a bound of 0 gives every holding figure 1), the nearer one is worst. */
        double worstDistance = Double.POSITIVE_INFINITY;
        /** The input that came closest to failing, abbreviated. */
        public String closestInput = "";
        /** The shrunk counterexample of a falsified property, or empty. */
        public String falsified = "";
        /**
         * Figures that held with value = bound: a count against 0 (mismatches ≤ 0) or an equality. Discrete figures
         * have no distance to failing, so they stay out of the worst margin; a check with no other figure reports
         * "exact" instead of a margin and an input.
         */
        public long exact;

        /** Every figure held exactly: no margin to measure. */
        public boolean onlyExact() {
            return figures > 0 && exact == figures;
        }
    }

    /** N when {@code -Dmechspec.propertyExamples=N} is given, else the property's own count. */
    public static int examples(int usual) {
        String n = System.getProperty("mechspec.propertyExamples", "").trim();
        if (n.isEmpty()) {
            return usual;
        }
        int given;
        try {
            given = Integer.parseInt(n);
        } catch (NumberFormatException e) {
            given = 0;
        }
        if (given < 1) {
            throw new IllegalArgumentException("-Dmechspec.propertyExamples must be a whole number of at least 1, got " + n);
        }
        return given;
    }

    /** Whether this run stresses the properties (the reporter then writes the ledger). */
    public static boolean active() {
        return !System.getProperty("mechspec.propertyExamples", "").isBlank();
    }

    /**
     * One example's figure ({@code value op bound}) for the property half running on this thread; returns whether it
     * holds, so a property can assert on it. {@code input} is described only when it is the closest so far.
     */
    public static boolean figure(String metric, double value, String op, double bound, Supplier<?> input) {
        Figures.Outcome o = new Figures.Outcome(metric, value, op, bound);
        String[] at = CURRENT.get();
        if (at != null && active()) {
            synchronized (LEDGER) {
                Entry e = LEDGER.computeIfAbsent(at[0] + "/" + at[1], k -> new Entry());
                e.figures++;
                if (o.holds() && value == bound) {
                    e.exact++;
                    return true;
                }
                double margin = o.margin();
                double distance = Math.abs(bound - value);
                if (margin < e.worstMargin || margin == e.worstMargin && distance < e.worstDistance) {
                    e.worstMargin = margin;
                    e.worstDistance = distance;
                    e.worstFigure = o.line();
                    e.closestInput = abbreviated(String.valueOf(input.get()));
                }
            }
        }
        return o.holds();
    }

    /** Forgets every record (a command that stresses starts from nothing, whatever ran before in this JVM). */
    public static void reset() {
        synchronized (LEDGER) {
            LEDGER.clear();
        }
    }

    static void enter(String paper, String check) {
        CURRENT.set(new String[] {paper, check});
        if (!active()) {
            return;
        }
        synchronized (LEDGER) {
            LEDGER.computeIfAbsent(paper + "/" + check, k -> new Entry());
        }
    }

    static void leave(Throwable failure) {
        String[] at = CURRENT.get();
        CURRENT.remove();
        if (at != null && failure instanceof AssertionError && active()) {
            synchronized (LEDGER) {
                LEDGER.computeIfAbsent(at[0] + "/" + at[1], k -> new Entry()).falsified = abbreviated(String.valueOf(failure.getMessage()))
                        + " (" + Properties.replayHint(Properties.seed()).replace("mechspec run", "mechspec stress") + ")";
            }
        }
    }

    /** The ledger by paper, then check. */
    public static Map<String, Map<String, Entry>> byPaper() {
        Map<String, Map<String, Entry>> out = new TreeMap<>();
        synchronized (LEDGER) {
            LEDGER.forEach((key, e) -> {
                String[] pc = key.split("/", 2);
                out.computeIfAbsent(pc[0], p -> new TreeMap<>()).put(pc[1], e);
            });
        }
        return out;
    }

    /** Writes {@code dir/<paper>.json} for every paper stressed in this JVM; returns the files. */
    public static java.util.List<Path> write(Path dir) throws IOException {
        ObjectMapper json = new ObjectMapper();
        java.util.List<Path> files = new java.util.ArrayList<>();
        for (var paper : byPaper().entrySet()) {
            ObjectNode root = json.createObjectNode();
            root.put("paper", paper.getKey());
            root.put("examples_per_property", examples(0));
            root.put("property_seed", Properties.seed());
            root.put("margin", "per figure (bound - value) / max(|bound|, |value|) for <=, mirrored for >=; 1 or -1 for =; "
                    + "negative fails; the worst over every example of the check, and of equal margins (a bound of 0) the figure nearest its bound; "
                    + "figures that held with value = bound (a count against 0, an equality) have no margin: counted as held exactly, and a check "
                    + "with only those is exact");
            ObjectNode checks = root.putObject("checks");
            paper.getValue().forEach((check, e) -> {
                ObjectNode c = checks.putObject(check);
                c.put("figures_reported", e.figures);
                if (e.onlyExact()) {
                    c.put("exact", true);
                } else if (e.figures > 0) {
                    c.put("figures_held_exactly", e.exact);
                    c.put("worst_margin", e.worstMargin);
                    c.put("worst_figure", e.worstFigure);
                    c.put("closest_input", e.closestInput);
                }
                if (!e.falsified.isEmpty()) {
                    c.put("falsified", e.falsified);
                }
            });
            Path file = dir.resolve(paper.getKey() + ".json");
            AtomicFiles.write(file, json.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n");
            files.add(file);
        }
        return files;
    }

    private static String abbreviated(String s) {
        String one = s.replaceAll("\\s+", " ").strip();
        return one.length() <= 600 ? one : one.substring(0, 597) + "...";
    }

    /** One check per row: figures reported, the worst margin, the closest figure and its input (or why none). */
    public static String table(Map<String, Entry> ledger) {
        StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%-52s %9s %10s  %s%n", "check", "figures", "worst", "closest figure / input"));
        ledger.forEach((check, e) -> {
            String margin = e.figures == 0 ? "-" : e.onlyExact() ? "exact" : String.format(Locale.ROOT, "%.3g", e.worstMargin);
            String detail = e.figures == 0 ? (e.falsified.isEmpty() ? "held; its property reports no figure" : "FALSIFIED")
                    : e.onlyExact() ? "every figure met its bound exactly (a count against 0 or an equality): no closest input"
                    : e.worstFigure + "\n" + " ".repeat(74) + "at " + shorten(e.closestInput, 200)
                            + (e.exact > 0 ? "\n" + " ".repeat(74) + "(" + e.exact + " more held exactly)" : "");
            b.append(String.format(Locale.ROOT, "%-52s %9d %10s  %s%n", check, e.figures, margin, detail));
        });
        return b.toString().stripTrailing();
    }

    private static String shorten(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 3) + "...";
    }
}
