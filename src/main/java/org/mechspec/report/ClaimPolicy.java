package org.mechspec.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.mechspec.spec.Manifest;

/**
 * Negative results from the manifest's per-seed hypotheses: every seed that contradicts one yields a sentence
 * naming the seed and both values, and an improvement is claimed only when every seed supports every hypothesis.
 */
public final class ClaimPolicy {
    private ClaimPolicy() {
    }

    /** Per seed: metric name → value (numbers only are used). */
    public static List<String> violations(Manifest manifest, Map<Long, Map<String, Object>> perSeed) {
        List<String> out = new ArrayList<>();
        for (Manifest.Hypothesis h : manifest.hypotheses()) {
            perSeed.forEach((seed, metrics) -> {
                Object lhs = metrics.get(h.lhs());
                Object rhs = metrics.get(h.rhs());
                if (lhs instanceof Number l && rhs instanceof Number r && !h.holds(l.doubleValue(), r.doubleValue())) {
                    out.add(h.sentence().replace("{seed}", Long.toString(seed))
                            .replace("{lhs}", format(l.doubleValue())).replace("{rhs}", format(r.doubleValue())));
                }
            });
        }
        return out;
    }

    /** True only if there are hypotheses, each was evaluated on every seed, and no seed contradicts any. */
    public static boolean claimsImprovement(Manifest manifest, Map<Long, Map<String, Object>> perSeed) {
        if (manifest.hypotheses().isEmpty() || perSeed.isEmpty()) {
            return false;
        }
        for (Manifest.Hypothesis h : manifest.hypotheses()) {
            for (Map<String, Object> metrics : perSeed.values()) {
                if (!(metrics.get(h.lhs()) instanceof Number l) || !(metrics.get(h.rhs()) instanceof Number r)
                        || !h.holds(l.doubleValue(), r.doubleValue())) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The artifact's negative-result text: the violation sentences, then the caveat. */
    public static String negativeResult(Manifest manifest, Map<Long, Map<String, Object>> perSeed) {
        List<String> v = violations(manifest, perSeed);
        String head = v.isEmpty() ? "No seed contradicts the stated hypotheses." : String.join(" ", v);
        return manifest.hypothesisCaveat().isBlank() ? head : head + " " + manifest.hypothesisCaveat();
    }

    private static String format(double x) {
        return String.format(Locale.ROOT, "%.10f", x);
    }
}
