package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.mechspec.report.ArtifactDiff;
import org.mechspec.report.PaperRun;
import org.mechspec.spec.Manifest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "diff", mixinStandardHelpOptions = true, header = "Compare two artifacts against the manifest tolerances.", description = {
    "Compare artifact A with the reference B, metric by metric and check by check,",
    "against the manifest tolerances (provenance and runtime are not compared).",
    "Artifacts of different papers are refused (exit 2).",
    "Exit 0 no drift, 1 drift, 2 unreadable input."})
final class DiffCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "A", description = "fresh artifact")
    Path a;

    @Parameters(index = "1", paramLabel = "B", description = "reference artifact")
    Path b;

    @Option(names = "--contracts", paramLabel = "DIR", description = "folder of manifests (default: those built into the jar)")
    Path contracts;

    @Option(names = "--seeds", paramLabel = "S,S", split = ",",
            description = "compare only these seeds, which both artifacts must have (e.g. a one-seed run against a full reference)")
    List<Long> seeds;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        Manifests manifests = Manifests.from(contracts);
        ArtifactFile fresh = ArtifactFile.read(a);
        ArtifactFile reference = ArtifactFile.read(b);
        Manifest manifest = manifests.forArtifact(fresh);
        Manifest referenceManifest = manifests.forArtifact(reference);
        PaperRun x = runOf(manifest, fresh);
        PaperRun y = runOf(referenceManifest, reference);
        if (!manifest.paper().equals(referenceManifest.paper()) || !x.paper.equals(y.paper)) {
            // Not drift: there is nothing to compare metric by metric (a different backend of one paper still is).
            throw new InputException("cannot compare artifacts of different papers: " + a + " is " + x.paper + ", " + b + " is " + y.paper);
        }
        if (seeds != null) {
            for (PaperRun run : List.of(x, y)) {
                List<Long> absent = seeds.stream().filter(s -> !run.seeds.containsKey(s)).toList();
                if (!absent.isEmpty()) {
                    throw new InputException((run == x ? a : b) + " has no seed " + absent + " (it has " + run.seeds.keySet() + ")");
                }
                run.seeds.keySet().retainAll(seeds);
            }
        }
        List<String> findings = ArtifactDiff.compare(manifest, x, y);
        findings.forEach(out::println);
        String shaA = fresh.json().path("mechspec").path("manifest_sha256").asText("");
        String shaB = reference.json().path("mechspec").path("manifest_sha256").asText("");
        if (!shaA.isEmpty() && !shaB.isEmpty() && !shaA.equals(shaB)) {
            out.println("note: the two artifacts were made with different versions of " + manifest.file()
                    + "; tolerances are those of the version here");
        }
        if (!findings.isEmpty()) {
            out.println("drift: " + findings.size() + " finding(s) between " + a + " and " + b);
            return ExitCodes.FINDINGS;
        }
        out.println("no drift: " + x.paper + "." + x.backend + ", seeds " + x.seeds.keySet() + ", within the tolerances of " + manifest.file());
        return ExitCodes.OK;
    }

    /** The per-seed values: the mechspec block where there is one, else read through the template (seed files). */
    static PaperRun runOf(Manifest manifest, ArtifactFile artifact) {
        JsonNode block = artifact.mechspecBlock();
        if (block != null) {
            try {
                return PaperRun.fromJson(block);
            } catch (RuntimeException e) {
                throw new InputException(artifact.path() + ": unreadable mechspec block: " + e.getMessage());
            }
        }
        return ArtifactContent.read(manifest, TemplatePositions.of(manifest.artifact()), artifact.json()).toRun();
    }
}
