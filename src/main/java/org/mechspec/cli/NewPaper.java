package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.mechspec.spec.ExecutedSources;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The files a new paper needs, written so the build is red until each is written: the manifest (seeds 42-44, a
 * synthetic dataset, one example check and metric; no template, so the default one), the package with a protocol
 * skeleton and its package-info, the contract class with a seeded and a property half per declared check, and the
 * mutants test with one mutant per check. Every generated test fails with "not written yet: <what to do>". Run again
 * after declaring more checks, it adds the missing halves and mutants and touches nothing already there.
 */
@Command(name = "new-paper", mixinStandardHelpOptions = true, header = "Start a paper: manifest, package, contracts, mutants.", description = {
    "Write contracts/KEY.json (seeds 42-44, a synthetic dataset, one example check",
    "and metric), the package org.mechspec.<key without dashes> with a protocol",
    "skeleton, and in src/test its contract class (a seeded and a property half per",
    "declared check) and mutants test. Every generated test fails with 'not written",
    "yet: ...' until written, so the build is red, never falsely green. Run it again",
    "after declaring checks: it adds their missing tests and changes nothing else.",
    "Exit 0 written, 2 bad key."})
final class NewPaper implements Callable<Integer> {
    private static final Pattern KEY = Pattern.compile("[a-z][a-z0-9]*(-[a-z0-9]+)*");
    private static final Pattern NAMED = Pattern.compile("check = \"([a-z0-9_]+)\"");
    private static final String PLACEHOLDER = "not written yet: ";

    @Parameters(index = "0", paramLabel = "KEY", description = "the paper's key, e.g. two-bit-kv (its tag and artifact name)")
    String key;

    @Option(names = "--root", paramLabel = "DIR", description = "the project folder (default: the current one)")
    Path root = Path.of("");

    @Spec
    CommandSpec spec;

    private String pkg;
    private String camel;
    final List<String> written = new ArrayList<>();

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        root = root.toAbsolutePath();
        validateKey();
        try {
            write();
        } catch (IOException e) {
            throw new InputException("cannot write the new paper's files under " + root + ": " + e.getMessage());
        }
        if (written.isEmpty()) {
            out.println(key + ": every declared check already has its tests; nothing written");
        } else {
            written.forEach(f -> out.println("wrote " + f));
            out.println("next: mvn -B verify -Dgroups=" + key + " fails with 'not written yet' for each part to write"
                    + " (README, \"Add a paper\")");
        }
        return ExitCodes.OK;
    }

    private void validateKey() {
        if (!KEY.matcher(key).matches()) {
            throw new InputException("paper key '" + key + "' must be lower-case letters and digits in dash-separated words, e.g. two-bit-kv");
        }
        this.pkg = key.replace("-", "");
        this.camel = camel(key.replace('-', '_'), true);
        if (Set.of("compute", "data", "model", "report", "spec", "cli", "bench").contains(pkg)) {
            throw new InputException("paper key '" + key + "' would use the shared package org.mechspec." + pkg);
        }
    }

    /** Writes what is missing; the paths written or extended are then in {@link #written}. */
    private void write() throws IOException {
        Path manifest = root.resolve("contracts").resolve(key + ".json");
        Path main = root.resolve("src/main/java/org/mechspec").resolve(pkg);
        Path test = root.resolve("src/test/java/org/mechspec").resolve(pkg);
        createIfAbsent(main.resolve("package-info.java"), packageInfo());
        createIfAbsent(main.resolve(camel + "Protocol.java"), protocol());
        createIfAbsent(manifest, manifest());
        List<String> checks = checks(manifest);
        complete(test.resolve(camel + "Contracts.java"), contractsHeader(), checks, this::contractHalves);
        complete(test.resolve(camel + "MutantsTest.java"), mutantsHeader(), checks, this::mutant);
    }

    private List<String> checks(Path manifest) throws IOException {
        JsonNode checks = ArtifactFile.JSON.readTree(Files.readString(manifest)).path("checks");
        List<String> out = new ArrayList<>();
        checks.forEach(c -> out.add(c.path("name").asText()));
        if (out.isEmpty() || out.stream().anyMatch(n -> !n.matches("[a-z][a-z0-9_]*"))) {
            throw new InputException(manifest + ": 'checks' must list checks named in snake_case, got " + checks);
        }
        return out;
    }

    /** Creates {@code file} with a header and one block per check, or appends the blocks of checks it does not name. */
    private void complete(Path file, String header, List<String> checks, Function<String, String> block) throws IOException {
        boolean exists = Files.exists(file);
        String text = exists ? Files.readString(file) : header + "}\n";
        Set<String> named = new HashSet<>();
        Matcher m = NAMED.matcher(text);
        while (m.find()) {
            named.add(m.group(1));
        }
        List<String> missing = checks.stream().filter(c -> !named.contains(c)).toList();
        if (exists && missing.isEmpty()) {
            return;
        }
        String body = text.substring(0, text.lastIndexOf('}')).stripTrailing();
        writeFile(file, body + "\n" + (exists ? "\n" : "") + String.join("\n", missing.stream().map(block).toList()) + "}\n");
        written.add(root.relativize(file) + (exists ? " (added " + String.join(", ", missing) + ")" : ""));
    }

    private String contractHalves(String check) {
        String method = camel(check, false);
        return """
                    @Contract(paper = "%1$s", check = "%2$s")
                    @Seeded
                    void %3$s(SeedRun run) {
                        fail("%4$srun %5$sProtocol.run(run.seed(), run.backend()), record each figure with run.metric(name, value),"
                                + " then run.check(<the definition holds within run.threshold()>)");
                    }

                    @Contract(paper = "%1$s", check = "%2$s")
                    @Test
                    void %3$sProperty(PropertyRun run) {
                        fail("%4$scheck %2$s over generated inputs with Properties.qt().forAll(...), the definition"
                                + " recomputed in the test as the oracle, within run.threshold() or the computation's error bound");
                    }
                """.formatted(key, check, method, PLACEHOLDER, camel);
    }

    private String mutant(String check) {
        return """
                    @Test
                    @Breaks(paper = "%1$s", check = "%2$s")
                    void %3$sReportsFalseOnABrokenMechanism() {
                        fail("%4$sbuild a deliberately broken mechanism here in src/test (a broken part through a seam the"
                                + " mechanism has anyway, or a decorator over the backend ops), run %2$s's judgement on it and"
                                + " assert that it reports false, and that the unbroken mechanism passes");
                    }
                """.formatted(key, check, camel(check, false), PLACEHOLDER);
    }

    private String contractsHeader() {
        return """
                package org.mechspec.%1$s;

                import static org.junit.jupiter.api.Assertions.fail;

                import org.junit.jupiter.api.Tag;
                import org.junit.jupiter.api.Test;
                import org.mechspec.spec.Contract;
                import org.mechspec.spec.PropertyRun;
                import org.mechspec.spec.SeedRun;
                import org.mechspec.spec.Seeded;

                /** The checks of contracts/%2$s.json: per check a seeded half (each backend and manifest seed) and a property half. */
                @Tag("%2$s")
                class %3$sContracts {
                """.formatted(pkg, key, camel);
    }

    private String mutantsHeader() {
        return """
                package org.mechspec.%1$s;

                import static org.junit.jupiter.api.Assertions.fail;

                import org.junit.jupiter.api.Tag;
                import org.junit.jupiter.api.Test;
                import org.mechspec.spec.Breaks;

                /** Every check of contracts/%2$s.json can fail: a deliberately broken mechanism makes it report false. */
                @Tag("%2$s")
                class %3$sMutantsTest {
                """.formatted(pkg, key, camel);
    }

    private String packageInfo() {
        return """
                /**
                 * %1$s: TODO one sentence on the mechanism.
                 *
                 * <p>Read in this order: {@code contracts/%1$s.json} (the checks, thresholds, metrics and the artifact's template)
                 * → {@link org.mechspec.%2$s.%3$sProtocol#run} (one seed's inputs, the mechanism, its figures) →
                 * {@code %3$sContracts} in {@code src/test} (one seeded and one property half per check) →
                 * {@code reports/%1$s.<backend>.json}.
                 */
                package org.mechspec.%2$s;
                """.formatted(key, pkg, camel);
    }

    private String protocol() {
        return """
                package org.mechspec.%1$s;

                import org.mechspec.compute.Backend;

                /** The %2$s protocol of contracts/%2$s.json: one seed's inputs from the pinned RNG, the mechanism, its figures. */
                public final class %3$sProtocol {
                    private %3$sProtocol() {
                    }

                    /** What one seed measures: one component per metric the manifest declares. */
                    public record Result(double exampleError) {
                    }

                    public static Result run(long seed, Backend backend) {
                        throw new UnsupportedOperationException("%4$sdraw seed " + seed + "'s inputs from new Rng(seed) (DESIGN §5),"
                                + " run the mechanism on " + backend + " and return its figures");
                    }
                }
                """.formatted(pkg, key, camel, PLACEHOLDER);
    }

    private String manifest() {
        String sources = String.join(", ", ExecutedSources.of(root, pkg).stream()
                .sorted((a, b) -> a.endsWith("/" + pkg) ? -1 : b.endsWith("/" + pkg) ? 1 : a.compareTo(b)).map(s -> "\"" + s + "\"").toList());
        return """
                {
                  "paper": "%1$s",
                  "arxiv_id": "",
                  "title": "TODO: the paper's title",
                  "seeds": [42, 43, 44],
                  "dataset": {
                    "id": "synthetic:%1$s-v1",
                    "recipe": "TODO: how each seed's inputs are drawn from Rng(seed) (DESIGN §5)"
                  },
                  "protocol": {"id": "%1$s-v1"},
                  "checks": [
                    {"name": "example_check", "threshold": 1e-12, "description": "TODO: what holds, compared with which definition",
                     "figures": [{"metric": "example_error", "op": "<=", "bound": "threshold"}]}
                  ],
                  "metrics": [
                    {"name": "example_error"}
                  ],
                  "headline": ["example_error"],
                  "default_tolerance": {"abs": 0, "rel": 1e-9},
                  "claim_policy": {"tier": "l1_mechanism", "diagnostic_only": true, "formal_comparison": false},
                  "limitations": ["TODO: what this reproduction does not show"],
                  "sources": [%2$s]
                }
                """.formatted(key, sources);
    }

    private void createIfAbsent(Path file, String text) throws IOException {
        if (!Files.exists(file)) {
            writeFile(file, text);
            written.add(root.relativize(file).toString());
        }
    }

    private static void writeFile(Path file, String text) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    /** snake_case (or a key with '_' for '-') to camelCase; {@code upper} capitalises the first word too. */
    static String camel(String snake, boolean upper) {
        StringBuilder b = new StringBuilder();
        for (String word : snake.split("_")) {
            if (!word.isEmpty()) {
                b.append(b.length() == 0 && !upper ? word : word.substring(0, 1).toUpperCase(Locale.ROOT) + word.substring(1));
            }
        }
        return b.toString();
    }
}
