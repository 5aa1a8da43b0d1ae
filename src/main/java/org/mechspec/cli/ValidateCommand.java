package org.mechspec.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.mechspec.spec.Manifest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "validate", mixinStandardHelpOptions = true, header = "Check artifacts against their paper's manifest.", description = {
    "Check artifacts against their paper's manifest. One mechspec wrote must equal",
    "the manifest's template rendered again from its mechspec block; a seed file",
    "must keep its layout, and its aggregates must follow from its per-seed values",
    "(1e-12 relative). Both: no failed check, negative results, provenance. One line",
    "per finding, naming its JSON path. Exit 0 valid, 1 findings, 2 unreadable input."})
final class ValidateCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "FILE", description = "artifacts (ours, or a paper's seed file)")
    List<Path> files;

    @Option(names = "--contracts", paramLabel = "DIR", description = "folder of manifests (default: those built into the jar)")
    Path contracts;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Manifests manifests = Manifests.from(contracts);
        int code = ExitCodes.OK;
        for (Path file : files) {
            try {
                ArtifactFile artifact = ArtifactFile.read(file);
                Manifest manifest = manifests.forArtifact(artifact);
                List<Finding> findings = ArtifactValidator.validate(manifest, artifact.json());
                findings.forEach(f -> out.println(file + ": " + f));
                if (findings.isEmpty()) {
                    out.println(file + ": valid " + manifest.paper() + " artifact");
                } else {
                    out.println(file + ": " + findings.size() + " finding(s) against " + manifest.file());
                    code = Math.max(code, ExitCodes.FINDINGS);
                }
            } catch (InputException e) {
                err.println("mechspec: " + e.getMessage());
                code = ExitCodes.BAD_INPUT;
            }
        }
        return code;
    }
}
