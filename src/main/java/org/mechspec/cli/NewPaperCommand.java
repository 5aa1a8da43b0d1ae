package org.mechspec.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "new-paper", mixinStandardHelpOptions = true, header = "Start a paper: manifest, package, contracts, mutants.", description = {
    "Write contracts/KEY.json (seeds 42-44, a synthetic dataset, one example check",
    "and metric), the package org.mechspec.<key without dashes> with a protocol",
    "skeleton, and in src/test its contract class (a seeded and a property half per",
    "declared check) and mutants test. Every generated test fails with 'not written",
    "yet: ...' until written, so the build is red, never falsely green. Run it again",
    "after declaring checks: it adds their missing tests and changes nothing else.",
    "Exit 0 written, 2 bad key."})
final class NewPaperCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "KEY", description = "the paper's key, e.g. two-bit-kv (its tag and artifact name)")
    String key;

    @Option(names = "--root", paramLabel = "DIR", description = "the project folder (default: the current one)")
    Path root = Path.of("");

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        NewPaper paper = new NewPaper(root.toAbsolutePath(), key);
        paper.write();
        if (paper.written.isEmpty()) {
            out.println(key + ": every declared check already has its tests; nothing written");
        } else {
            paper.written.forEach(f -> out.println("wrote " + f));
            out.println("next: mvn -B verify -Dgroups=" + key + " fails with 'not written yet' for each part to write"
                    + " (README, \"Add a paper\")");
        }
        return ExitCodes.OK;
    }
}
