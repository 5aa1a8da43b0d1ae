package org.mechspec.spec;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import io.qameta.allure.Allure;
import io.qameta.allure.model.Status;
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
            b.append("\n\nThreshold: ").append(Figures.number(c.threshold())).append(" (contracts/").append(manifest.paper()).append(".json).");
        }
        for (JsonNode f : Figures.declared(manifest, check)) {
            b.append("\nHolds when ").append(f.path("metric").asText()).append(' ').append(f.path("op").asText()).append(' ')
                    .append(f.path("bound").asText()).append('.');
        }
        List<String> rejects = KnownRejections.of(manifest.paper(), check);
        if (!rejects.isEmpty()) {
            b.append("\n\nKnown to reject (its mutant tests):");
            rejects.forEach(r -> b.append("\n- ").append(r));
        }
        return b.toString();
    }

    /**
     * One step per declared figure: {@code minimum_output_bound_slack = 0.0069 ≥ -1e-12}, failed where it does not hold
     * or was not recorded.
     */
    static void steps(SeedRun run) {
        for (Figures.Outcome o : Figures.evaluate(run.manifest(), run.checkName(), run.metrics())) {
            Allure.step(o.line(), o.holds() ? Status.PASSED : Status.FAILED);
        }
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
}
