package org.mechspec.report;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;

/**
 * The verify-phase gate: compares every fresh artifact with the committed one in reports/ and fails the build
 * on a metric or check drift beyond the manifest tolerance; with update=true it rewrites the committed ones.
 * args: fresh folder, reports folder, contracts folder, update flag.
 */
public final class ReportGate {
    private ReportGate() {
    }

    public static void main(String[] args) throws IOException {
        Path fresh = Path.of(args[0]);
        Path reports = Path.of(args[1]);
        Path contracts = Path.of(args[2]);
        boolean update = Boolean.parseBoolean(args[3]);
        if (!Files.isDirectory(fresh)) {
            System.out.println("[mechspec] no fresh artifacts in " + fresh + " (no contract ran)");
            return;
        }
        List<String> errors = ListenerErrors.read(fresh);
        if (!errors.isEmpty()) {
            errors.forEach(e -> System.out.println("[mechspec] ERROR " + e));
            throw new IllegalStateException("the reporter failed: " + errors.get(0)
                    + (errors.size() > 1 ? " (and " + (errors.size() - 1) + " more above)" : ""));
        }
        List<String> findings = new ArrayList<>();
        List<Path> files;
        try (Stream<Path> s = Files.list(fresh)) {
            files = s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
        }
        for (Path file : files) {
            Path committed = reports.resolve(file.getFileName());
            String text = Files.readString(file);
            if (update) {
                AtomicFiles.write(committed, text);
                System.out.println("[mechspec] updated " + committed);
                continue;
            }
            if (!Files.exists(committed)) {
                System.out.println("[mechspec] WARNING: no committed reference " + committed
                        + "; run with -Dmechspec.updateReports=true to create it");
                continue;
            }
            JsonNode a = PaperRun.JSON.readTree(text).path("mechspec");
            JsonNode b = PaperRun.JSON.readTree(Files.readString(committed)).path("mechspec");
            PaperRun freshRun = PaperRun.fromJson(a);
            Manifest manifest = ManifestLoader.load(contracts.resolve(freshRun.paper + ".json"));
            PaperRun ref = PaperRun.fromJson(b);
            // A run narrowed with -Dmechspec.seeds compares only the seeds it ran.
            ref.seeds.keySet().retainAll(freshRun.seeds.keySet());
            for (String f : ArtifactDiff.compare(manifest, freshRun, ref)) {
                findings.add(file.getFileName() + ": " + f);
            }
        }
        if (!findings.isEmpty()) {
            findings.forEach(f -> System.out.println("[mechspec] DRIFT " + f));
            throw new IllegalStateException(findings.size() + " metric drift(s) against reports/ beyond the manifest tolerance"
                    + " (first: " + findings.get(0) + "); if the change is intended, rerun with -Dmechspec.updateReports=true");
        }
        if (!update) {
            System.out.println("[mechspec] " + files.size() + " artifact(s) checked against reports/: no drift beyond tolerance");
        }
    }
}
