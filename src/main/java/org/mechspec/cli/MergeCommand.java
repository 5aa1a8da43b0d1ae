package org.mechspec.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.mechspec.report.AtomicFiles;
import org.mechspec.report.OutputFolder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "merge", mixinStandardHelpOptions = true, header = "Join artifacts from runners with disjoint seeds.", description = {
    "Join artifacts of one paper and backend from runners with disjoint seeds into",
    "one artifact with recomputed aggregates. Overlapping seeds, different commits,",
    "sources or manifests, and invalid shards are refused; nothing is written then.",
    "Exit 0 merged, 1 refused, 2 unreadable input."})
final class MergeCommand implements Callable<Integer> {
    @Parameters(arity = "2..*", paramLabel = "FILE", description = "shards written by mechspec run or mvn verify")
    List<Path> files;

    @Option(names = "--out", required = true, paramLabel = "FILE", description = "the merged artifact (written atomically)")
    Path out;

    @Option(names = "--contracts", paramLabel = "DIR", description = "folder of manifests (default: those built into the jar)")
    Path contracts;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        PrintWriter stdout = spec.commandLine().getOut();
        String unwritable = OutputFolder.fileRefusal("--out", out);
        if (unwritable != null) {
            throw new InputException(unwritable);
        }
        Manifests manifests = Manifests.from(contracts);
        List<ArtifactFile> shards = new ArrayList<>();
        files.forEach(f -> shards.add(ArtifactFile.read(f)));
        ShardMerge merge = new ShardMerge();
        ObjectNode merged;
        try {
            merged = merge.merge(manifests, shards);
        } catch (ShardMerge.Refused refused) {
            refused.reasons.forEach(stdout::println);
            stdout.println("merge refused: " + refused.reasons.size() + " reason(s); " + out + " not written");
            return ExitCodes.FINDINGS;
        }
        merge.notes.forEach(n -> stdout.println("note: " + n));
        try {
            AtomicFiles.write(out, ArtifactFile.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(merged) + "\n");
        } catch (IOException e) {
            throw InputException.cannotWrite(out, e);
        }
        stdout.println("merged " + files.size() + " shards into " + out + ": " + merged.path("mechspec").path("paper").asText() + "."
                + merged.path("mechspec").path("backend").asText() + ", seeds " + merged.path("mechspec").path("seeds").properties()
                .stream().map(e -> e.getKey()).toList());
        return ExitCodes.OK;
    }
}
