package org.mechspec.oal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.mechspec.report.ClaimPolicy;
import org.mechspec.spec.Manifest;

/**
 * Who writes the negative results: the platform's claim policy (seed by seed), or — broken, for the mutant test —
 * a judge that looks only at the mean over seeds and so hides a seed that contradicts a hypothesis.
 */
final class OalClaims {
    private OalClaims() {
    }

    record Verdict(List<String> sentences, boolean claimsImprovement) {
    }

    static Verdict judge(Manifest manifest, Map<Long, Map<String, Object>> table) {
        return new Verdict(ClaimPolicy.violations(manifest, table), ClaimPolicy.claimsImprovement(manifest, table));
    }

    /** A broken judge: the hypotheses on the mean over seeds, which hides a seed that contradicts one. */
    static Verdict judgeOnSeedMean(Manifest manifest, Map<Long, Map<String, Object>> table) {
        Map<String, Object> means = new LinkedHashMap<>();
        for (Manifest.Hypothesis h : manifest.hypotheses()) {
            for (String metric : List.of(h.lhs(), h.rhs())) {
                double sum = 0.0;
                for (Map<String, Object> row : table.values()) {
                    sum += ((Number) row.get(metric)).doubleValue();
                }
                means.put(metric, sum / table.size());
            }
        }
        Map<Long, Map<String, Object>> pooled = new LinkedHashMap<>();
        pooled.put(table.keySet().iterator().next(), means);
        return new Verdict(new ArrayList<>(ClaimPolicy.violations(manifest, pooled)),
                ClaimPolicy.claimsImprovement(manifest, pooled));
    }
}
