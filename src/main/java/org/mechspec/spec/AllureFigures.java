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
        if (!c.regimes().isEmpty()) {
            b.append("\n\nProperty half's inputs (regimes):");
            c.regimes().forEach(r -> b.append("\n- ").append(r));
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

    /**
     * Says in the pane whether kernels computed what this invocation judged: the CUDA launches of the invocation and of
     * the seed's shared protocol run it read (measured), or that the figures came from Java on the CPU.
     */
    static void deviceWork(SeedRun run) {
        org.mechspec.compute.DeviceWork own = run.ownWork();
        if (own == null) {
            if (run.backend() instanceof org.mechspec.compute.CpuBackend) {
                Allure.step("Computed by mechspec's Java CPU backend: no device");
            }
            return;
        }
        org.mechspec.compute.DeviceWork all = run.workBehindFigures();
        if (all.kernelLaunches() == 0) {
            Allure.step("No CUDA kernel ran for this result: its figures were computed in Java on the CPU (measured: 0 launches)");
            return;
        }
        StringBuilder kernels = new StringBuilder();
        all.launches().forEach((k, n) -> kernels.append(kernels.length() == 0 ? "" : ", ").append(k).append(" ×").append(n));
        Allure.step(String.format(java.util.Locale.ROOT, "CUDA kernels behind this result (measured, this check and the seed's"
                + " shared protocol run): %d launches (%s); %d bytes to and %d from the device", all.kernelLaunches(), kernels,
                all.bytesToDevice(), all.bytesFromDevice()));
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
