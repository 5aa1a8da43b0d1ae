package org.mechspec.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.mechspec.report.AtomicFiles;
import org.mechspec.report.OutputFolder;
import org.mechspec.spec.Manifest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The merge job of {@code mechspec slurm submit}: per paper and backend, the shards' artifacts merged and validated
 * into {@code DIR/merged/reports/}, every shard's Allure results in {@code DIR/merged/allure-results}, and
 * {@code DIR/merged/summary.md}. A shard that left no artifact (a non-zero exit other than a failed contract, or no
 * exit at all) is named with its log, and its paper is not merged until {@code resubmit} recovers it.
 */
@Command(name = "merge", mixinStandardHelpOptions = true, header = "Merge a Slurm run's shards (what its merge job runs).", description = {
    "Exit 0 every paper merged and valid, 1 a shard failed, a contract failed or a merge was refused, 2 not a run folder."})
final class SlurmMerge implements Callable<Integer> {
    @Parameters(paramLabel = "DIR", description = "the folder given to slurm submit --out")
    Path dir;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        PrintWriter stdout = spec.commandLine().getOut();
        SlurmPlan plan = SlurmPlan.read(dir);
        Path merged = plan.dir().resolve("merged");
        PaperProcesses.deleteTree(merged);
        OutputFolder.create(merged);
        Manifests manifests = Manifests.contracts();
        List<String> lines = new ArrayList<>();
        boolean clean = true;
        // paper -> backend -> shard artifacts; paper -> failed shards
        Map<String, Map<String, List<Path>>> artifacts = new TreeMap<>();
        Map<String, List<String>> failed = new TreeMap<>();
        for (SlurmPlan.Task t : plan.tasks()) {
            Integer code = plan.exitCode(t);
            List<Path> found = shardArtifacts(plan.shard(t), t.paper());
            if (code == null || (code != ExitCodes.OK && code != ExitCodes.FINDINGS) || found.isEmpty()) {
                failed.computeIfAbsent(t.paper(), p -> new ArrayList<>()).add("shard " + t.name() + " (task " + t.index() + ") "
                        + (code == null ? "left no exit code (killed, timed out or never started)" : "exited " + code)
                        + (found.isEmpty() ? ", no artifact" : "") + "; log " + plan.log(t));
                continue;
            }
            if (code == ExitCodes.FINDINGS) {
                clean = false;
                lines.add("- shard " + t.name() + ": a contract failed (its artifact records it); log " + plan.log(t));
            }
            for (Path a : found) {
                String backend = a.getFileName().toString().substring(t.paper().length() + 1).replaceFirst("\\.json$", "");
                artifacts.computeIfAbsent(t.paper(), p -> new TreeMap<>()).computeIfAbsent(backend, b -> new ArrayList<>()).add(a);
            }
            PaperProcesses.copyTree(plan.shard(t).resolve("allure-results"), merged.resolve("allure-results"), f -> true);
        }
        for (String paper : plan.tasks().stream().map(SlurmPlan.Task::paper).distinct().toList()) {
            if (failed.containsKey(paper)) {
                clean = false;
                failed.get(paper).forEach(f -> {
                    stdout.println("mechspec: " + paper + ": failed " + f);
                    lines.add("- " + paper + ": failed " + f);
                });
                lines.add("- " + paper + ": not merged (mechspec slurm resubmit " + plan.dir() + " reruns the failed shards)");
                continue;
            }
            for (Map.Entry<String, List<Path>> e : artifacts.getOrDefault(paper, Map.of()).entrySet()) {
                clean &= mergeOne(manifests, paper, e.getKey(), e.getValue(), merged.resolve("reports"), lines, stdout);
            }
        }
        AtomicFiles.write(merged.resolve("summary.md"), "# mechspec Slurm run " + plan.dir() + "\n\n" + String.join("\n", lines) + "\n");
        stdout.println((clean ? "merged every paper: " : "merged with findings: ") + merged.resolve("summary.md"));
        return clean ? ExitCodes.OK : ExitCodes.FINDINGS;
    }

    private static boolean mergeOne(Manifests manifests, String paper, String backend, List<Path> shards, Path reports,
                                    List<String> lines, PrintWriter stdout) throws IOException {
        Path out = reports.resolve(paper + "." + backend + ".json");
        ShardMerge merge = new ShardMerge();
        ObjectNode json;
        try {
            json = merge.merge(manifests, shards.stream().map(ArtifactFile::read).toList());
        } catch (ShardMerge.Refused refused) {
            refused.reasons.forEach(r -> stdout.println("mechspec: " + paper + "." + backend + ": merge refused: " + r));
            lines.add("- " + paper + "." + backend + ": merge refused: " + String.join("; ", refused.reasons));
            return false;
        }
        Files.createDirectories(reports);
        AtomicFiles.write(out, ArtifactFile.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(json) + "\n");
        Manifest manifest = manifests.forPaper(paper);
        List<Finding> findings = ArtifactValidator.validate(manifest, ArtifactFile.read(out).json());
        findings.forEach(f -> stdout.println(out + ": " + f));
        lines.add("- " + paper + "." + backend + ": " + shards.size() + " shards merged into " + out
                + (findings.isEmpty() ? ", valid" : ", " + findings.size() + " finding(s)"));
        stdout.println("merged " + shards.size() + " shards into " + out);
        return findings.isEmpty();
    }

    /** The shard's artifacts of {@code paper}: {@code <paper>.<backend>.json} in its reports folder. */
    private static List<Path> shardArtifacts(Path shard, String paper) throws IOException {
        Path reports = shard.resolve("reports");
        if (!Files.isDirectory(reports)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(reports)) {
            return files.filter(f -> f.getFileName().toString().matches(java.util.regex.Pattern.quote(paper) + "\\.[a-z0-9-]+\\.json"))
                    .sorted().toList();
        }
    }
}
