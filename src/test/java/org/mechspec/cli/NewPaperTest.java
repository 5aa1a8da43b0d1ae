package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.spec.ExecutedSources;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;

/**
 * {@code mechspec new-paper} in a scratch project (the shared packages linked in): a manifest that loads and lists
 * what the package executes, and tests that fail saying what to write; run again, it adds only what a new check lacks.
 */
@Tag("cli")
class NewPaperTest {
    @TempDir
    Path root;

    @BeforeEach
    void sharedPackages() throws Exception {
        Path shared = Files.createDirectories(root.resolve("src/main/java/org/mechspec"));
        Files.createSymbolicLink(shared.resolve("compute"), Path.of("src/main/java/org/mechspec/compute").toAbsolutePath());
        Files.createSymbolicLink(shared.resolve("data"), Path.of("src/main/java/org/mechspec/data").toAbsolutePath());
        Files.createSymbolicLink(root.resolve("src/main/cuda"), Path.of("src/main/cuda").toAbsolutePath());
    }

    /** The links go before JUnit empties the folder, which would warn about each link to a file outside it. */
    @org.junit.jupiter.api.AfterEach
    void unlinkSharedPackages() throws Exception {
        Files.delete(root.resolve("src/main/java/org/mechspec/compute"));
        Files.delete(root.resolve("src/main/java/org/mechspec/data"));
        Files.delete(root.resolve("src/main/cuda"));
    }

    private Cli newPaper(String key) {
        return Cli.run("new-paper", key, "--root", root.toString());
    }

    @Test
    void writesAManifestThatLoadsAndTestsThatSayWhatToWrite() throws Exception {
        Cli r = newPaper("two-bit-kv");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("wrote contracts/two-bit-kv.json", "wrote src/main/java/org/mechspec/twobitkv/TwoBitKvProtocol.java",
                "wrote src/test/java/org/mechspec/twobitkv/TwoBitKvContracts.java", "wrote src/test/java/org/mechspec/twobitkv/TwoBitKvMutantsTest.java",
                "wrote src/test/java/org/mechspec/twobitkv/TwoBitKvChecks.java");
        // The mechanism returns a trace; the figures are recomputed in the test, never taken from the mechanism.
        assertThat(Files.readString(root.resolve("src/main/java/org/mechspec/twobitkv/TwoBitKvProtocol.java")))
                .contains("public record Trace(", "public static Trace run(long seed, Backend backend)").doesNotContain("record Result");
        assertThat(Files.readString(root.resolve("src/test/java/org/mechspec/twobitkv/TwoBitKvChecks.java")))
                .contains("record Measured(double exampleError)", "static Measured figures(TwoBitKvProtocol.Trace trace)");
        Manifest m = ManifestLoader.load(root.resolve("contracts/two-bit-kv.json"));
        assertThat(m.paper()).isEqualTo("two-bit-kv");
        assertThat(m.seeds()).containsExactly(42L, 43L, 44L);
        assertThat(m.checks()).containsOnlyKeys("example_check");
        assertThat(m.sources().get(0)).isEqualTo("src/main/java/org/mechspec/twobitkv");
        assertThat(m.sources()).containsExactlyInAnyOrderElementsOf(ExecutedSources.of(root, "twobitkv"));
        String contracts = Files.readString(root.resolve("src/test/java/org/mechspec/twobitkv/TwoBitKvContracts.java"));
        assertThat(contracts).contains("@Tag(\"two-bit-kv\")", "@Contract(paper = \"two-bit-kv\", check = \"example_check\")",
                "void exampleCheck(SeedRun run)", "void exampleCheckProperty(PropertyRun run)",
                "run.metrics(TwoBitKvChecks.figures(run.protocol(TwoBitKvProtocol.Trace.class, TwoBitKvProtocol::run)));", "run.check();",
                "fail(\"not written yet: check example_check over generated inputs");
        assertThat(Files.readString(root.resolve("src/test/java/org/mechspec/twobitkv/TwoBitKvMutantsTest.java")))
                .contains("@Breaks(paper = \"two-bit-kv\", check = \"example_check\", description = \"not written yet: what the broken mechanism does\")", "fail(\"not written yet: build a deliberately broken");
    }

    @Test
    void runAgainAfterDeclaringACheckItAddsOnlyThatChecksTests() throws Exception {
        newPaper("two-bit-kv");
        Path manifest = root.resolve("contracts/two-bit-kv.json");
        Path contracts = root.resolve("src/test/java/org/mechspec/twobitkv/TwoBitKvContracts.java");
        Path protocol = root.resolve("src/main/java/org/mechspec/twobitkv/TwoBitKvProtocol.java");
        String written = Files.readString(contracts).replaceFirst("fail\\(\"not written yet: check[^;]*;", "// the author's property");
        Files.writeString(contracts, written);
        Files.writeString(protocol, "// the author's protocol\n");
        Files.writeString(manifest, Files.readString(manifest).replace("\"checks\": [", "\"checks\": [\n    {\"name\": \"keys_per_channel\", \"description\": \"d\"},"));

        Cli again = newPaper("two-bit-kv");
        assertThat(again.code()).as(again.toString()).isZero();
        assertThat(again.out()).contains("wrote src/test/java/org/mechspec/twobitkv/TwoBitKvContracts.java (added keys_per_channel)")
                .doesNotContain("TwoBitKvProtocol", "two-bit-kv.json");
        String now = Files.readString(contracts);
        assertThat(now).startsWith(written.substring(0, written.lastIndexOf('}')).stripTrailing())
                .contains("void keysPerChannel(SeedRun run)", "void keysPerChannelProperty(PropertyRun run)");
        assertThat(Files.readString(protocol)).isEqualTo("// the author's protocol\n");
        assertThat(newPaper("two-bit-kv").out()).contains("nothing written");
    }

    @Test
    void checksDeclaredInPlaceOfTheExampleReplaceItsUntouchedStubsAndItsMeasuredRecord() throws Exception {
        newPaper("two-bit-kv");
        Path manifest = root.resolve("contracts/two-bit-kv.json");
        Path contracts = root.resolve("src/test/java/org/mechspec/twobitkv/TwoBitKvContracts.java");
        Path mutants = root.resolve("src/test/java/org/mechspec/twobitkv/TwoBitKvMutantsTest.java");
        Path checks = root.resolve("src/test/java/org/mechspec/twobitkv/TwoBitKvChecks.java");
        String mutantsBefore = Files.readString(mutants).replace("not written yet: what the broken mechanism does", "the author's words");
        Files.writeString(mutants, mutantsBefore);
        Files.writeString(manifest, Files.readString(manifest)
                .replaceFirst("(?s)\"checks\": \\[.*?\\],\\s*\"metrics\": \\[.*?\\]", """
                        "checks": [{"name": "keys_per_channel", "description": "d", "figures": [{"metric": "key_mse", "op": "<=", "bound": "0.1"}]}],
                          "metrics": [{"name": "key_mse"}, {"name": "bytes_off"}]""".strip())
                .replace("\"headline\": [\"example_error\"]", "\"headline\": [\"key_mse\"]"));

        Cli again = newPaper("two-bit-kv");
        assertThat(again.code()).as(again.toString()).isZero();
        assertThat(again.out()).contains("TwoBitKvContracts.java (added keys_per_channel; removed the stubs of example_check, no longer declared)",
                "TwoBitKvChecks.java (Measured: the manifest's metrics)");
        assertThat(Files.readString(contracts)).contains("void keysPerChannel(SeedRun run)").doesNotContain("example_check", "exampleCheck");
        // A stub the author has touched stays (coverage then names its undeclared check).
        assertThat(Files.readString(mutants)).contains("check = \"example_check\"", "check = \"keys_per_channel\"");
        assertThat(Files.readString(checks)).contains("record Measured(double keyMse, double bytesOff)").doesNotContain("double exampleError");
        assertThat(ManifestLoader.load(manifest).checks()).containsOnlyKeys("keys_per_channel");
    }

    @Test
    void startingFromTheAuthorsManifestItWritesTheHalvesOfExactlyItsChecks() throws Exception {
        Path manifest = Files.createDirectories(root.resolve("contracts")).resolve("kivi.json");
        String mine = templateManifest("\"src/main/java/org/mechspec/kivi\", \"src/main/java/org/mechspec/compute\"")
                .replaceFirst("(?s)\"checks\": \\[.*?\\],\\s*\"metrics\"", """
                        "checks": [
                            {"name": "keys_per_channel", "description": "d", "figures": [{"metric": "key_mse", "op": "<=", "bound": "0.1"}]},
                            {"name": "byte_accounting_exact", "description": "d", "figures": [{"metric": "bytes_off", "op": "=", "bound": "0"}]}
                          ],
                          "metrics\"""".strip());
        Files.writeString(manifest, mine);

        Cli r = newPaper("kivi");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).doesNotContain("wrote contracts/kivi.json");
        assertThat(Files.readString(manifest)).isEqualTo(mine);
        String contracts = Files.readString(root.resolve("src/test/java/org/mechspec/kivi/KiviContracts.java"));
        assertThat(contracts).contains("void keysPerChannel(SeedRun run)", "void byteAccountingExact(SeedRun run)",
                "void keysPerChannelProperty(PropertyRun run)", "void byteAccountingExactProperty(PropertyRun run)").doesNotContain("example_check", "exampleCheck");
        assertThat(Files.readString(root.resolve("src/test/java/org/mechspec/kivi/KiviMutantsTest.java")))
                .contains("check = \"keys_per_channel\"", "check = \"byte_accounting_exact\"").doesNotContain("example_check");
        // No baselines declared: no baseline line, no baseline stub.
        assertThat(contracts).doesNotContain("run.baselines");
        assertThat(Files.readString(root.resolve("src/main/java/org/mechspec/kivi/KiviProtocol.java"))).doesNotContain("baseline(");
    }

    /** The scaffold's own manifest for paper kivi with the given sources, as an author would start from it. */
    private static String templateManifest(String sources) throws Exception {
        return Files.readString(Path.of("src/main/resources/org/mechspec/cli/new-paper/manifest.json.txt"))
                .replace("@key@", "kivi").replace("@package_field@", "").replace("@sources@", sources);
    }

    @Test
    void aManifestThatDeclaresBaselinesGetsTheirRecordInEverySeededHalfAndABaselineStub() throws Exception {
        Path manifest = Files.createDirectories(root.resolve("contracts")).resolve("kivi.json");
        String mine = templateManifest("\"src/main/java/org/mechspec/kivi\"")
                .replaceFirst("\"checks\":", "\"baselines\": [{\"name\": \"recent_only\", \"description\": \"d\"}],\n  \"checks\":");
        Files.writeString(manifest, mine);
        assertThat(ManifestLoader.load(manifest).baselines()).hasSize(1);

        Cli r = newPaper("kivi");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(Files.readString(root.resolve("src/test/java/org/mechspec/kivi/KiviContracts.java")))
                .contains("run.baselines(name -> KiviChecks.figures(KiviProtocol.baseline(name, run.seed())));\n        run.check();")
                .doesNotContain("@baselines_");
        assertThat(Files.readString(root.resolve("src/main/java/org/mechspec/kivi/KiviProtocol.java")))
                .contains("public static Trace baseline(String name, long seed)", "not written yet: run baseline ", "contracts/kivi.json")
                .doesNotContain("@baselines_", "@key@");
        assertCompiles(root, "src/main/java/org/mechspec/kivi", "src/test/java/org/mechspec/kivi");
    }

    @Test
    void aKeyThatIsNoPackageNameOrASharedOneIsRefused() {
        assertThat(newPaper("Two_Bit").code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(newPaper("Two_Bit").err()).contains("paper key 'Two_Bit' must be lower-case letters and digits");
        assertThat(newPaper("compute").err()).contains("would use the shared package org.mechspec.compute");
        assertThat(root.resolve("contracts")).doesNotExist();
    }

    @Test
    void aFolderThatIsNoCheckoutIsOneLineAndGetsNothing(@TempDir Path elsewhere) throws Exception {
        Cli r = Cli.run("new-paper", "demo", "--root", elsewhere.toString());
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err().strip()).as(r.toString()).contains("is not a mechspec checkout").contains("nothing was written").doesNotContain("\n");
        try (var left = Files.list(elsewhere)) {
            assertThat(left).as("files in the folder").isEmpty();
        }
    }

    @Test
    void aFailurePartWayPutsBackEverythingItWrote() throws Exception {
        // The package is written before the manifest's checks are read; a manifest whose checks are unusable then stops
        // the run, which must take back the package it had already written.
        Path manifest = Files.createDirectories(root.resolve("contracts")).resolve("kivi.json");
        String text = "{\"paper\": \"kivi\", \"checks\": [{\"name\": \"Keys-Per-Channel\"}]}";
        Files.writeString(manifest, text);
        Cli r = newPaper("kivi");
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err()).as(r.toString()).contains("'checks' must list checks named in snake_case").contains("nothing was written");
        assertThat(root.resolve("src/main/java/org/mechspec/kivi")).as("the package it wrote first").doesNotExist();
        assertThat(root.resolve("src/test")).doesNotExist();
        assertThat(Files.readString(manifest)).isEqualTo(text);
    }

    @Test
    void whatItWritesCompiles() throws Exception {
        assertThat(newPaper("two-bit-kv").code()).isZero();
        assertCompiles(root, "src/main/java/org/mechspec/twobitkv", "src/test/java/org/mechspec/twobitkv");
    }

    /** javac (release 17, this test's class path) on every file of the given folders of {@code project}; how many. */
    private static int assertCompiles(Path project, String... trees) throws Exception {
        List<java.io.File> sources = new java.util.ArrayList<>();
        for (String tree : trees) {
            try (var files = Files.list(project.resolve(tree))) {
                files.map(Path::toFile).forEach(sources::add);
            }
        }
        javax.tools.JavaCompiler javac = javax.tools.ToolProvider.getSystemJavaCompiler();
        java.io.StringWriter diagnostics = new java.io.StringWriter();
        try (var files = javac.getStandardFileManager(null, null, java.nio.charset.StandardCharsets.UTF_8)) {
            boolean ok = javac.getTask(diagnostics, files, null, List.of("--release", "17", "-proc:none", "-d",
                    Files.createDirectories(project.resolve("classes")).toString(), "-cp", System.getProperty("java.class.path")), null,
                    files.getJavaFileObjectsFromFiles(sources)).call();
            assertThat(ok).as("javac on the scaffold: %s", diagnostics).isTrue();
        }
        return sources.size();
    }

    @Test
    void withProjectItWritesAProjectOfItsOwnThatCompilesAgainstMechspec(@TempDir Path elsewhere) throws Exception {
        Path project = elsewhere.resolve("lab-paper");
        Cli r = Cli.run("new-paper", "recent-only", "--project", project.toString(), "--package", "org.lab.recent");
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(Files.readString(project.resolve("pom.xml"))).contains("<artifactId>mechspec</artifactId>")
                .contains("<mechspec.version>" + NewPaper.mechspecVersion() + "</mechspec.version>").contains("<groupId>org.lab</groupId>")
                .doesNotContain("@key@", "@group@", "<relativePath>", "systemPath");
        org.mechspec.spec.Manifest manifest = org.mechspec.spec.ManifestLoader.load(project.resolve("contracts/recent-only.json"));
        assertThat(manifest.javaPackage()).isEqualTo("org.lab.recent");
        assertThat(manifest.sources()).containsExactly("src/main/java/org/lab/recent");
        assertThat(assertCompiles(project, "src/main/java/org/lab/recent", "src/test/java/org/lab/recent")).isEqualTo(5);
        assertThat(Cli.run("new-paper", "recent-only", "--package", "org.lab.recent").err()).contains("--package needs --project");
        assertThat(Cli.run("new-paper", "recent-only", "--project", project.toString(), "--package", "org.mechspec.x").err())
                .contains("must be a Java package name of your own");
    }

    /**
     * The measure of mechspec as a library: examples/own-paper, a four-check paper with its own worker operation and
     * two baselines, takes at most 400 hand-written lines: its manifest whole, every non-blank line of a source the
     * scaffold does not write, and every line of a scaffolded source that the scaffold's version lacks (line diff).
     */
    @Test
    void theExamplePaperTakesAtMost400HandWrittenLines(@TempDir Path elsewhere) throws Exception {
        Path example = Path.of("examples/own-paper");
        Path scaffold = Files.createDirectories(elsewhere.resolve("scaffold/contracts")).getParent();
        Files.copy(example.resolve("contracts/sink-window.json"), scaffold.resolve("contracts/sink-window.json"));
        Cli r = Cli.run("new-paper", "sink-window", "--project", scaffold.toString(), "--package", "org.example.sinkwindow");
        assertThat(r.code()).as(r.toString()).isZero();
        java.util.Map<String, Integer> written = new java.util.TreeMap<>();
        written.put("contracts/sink-window.json", Files.readAllLines(example.resolve("contracts/sink-window.json")).size());
        try (var files = Files.walk(example.resolve("src"))) {
            for (Path source : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                Path relative = example.relativize(source);
                List<String> mine = Files.readAllLines(source).stream().map(String::stripTrailing).toList();
                Path generated = scaffold.resolve(relative.toString());
                written.put(relative.toString(), Files.exists(generated)
                        ? mine.size() - commonLines(mine, Files.readAllLines(generated).stream().map(String::stripTrailing).toList())
                        : (int) mine.stream().filter(line -> !line.isBlank()).count());
            }
        }
        int total = written.values().stream().mapToInt(Integer::intValue).sum();
        System.out.println("examples/own-paper: " + total + " hand-written lines " + written);
        assertThat(written).hasSize(7);
        assertThat(total).as("hand-written lines %s", written).isLessThanOrEqualTo(400);
    }

    /** The length of the longest common subsequence of two files' lines: what a line diff keeps. */
    private static int commonLines(List<String> a, List<String> b) {
        int[][] common = new int[a.size() + 1][b.size() + 1];
        for (int i = a.size() - 1; i >= 0; i--) {
            for (int j = b.size() - 1; j >= 0; j--) {
                common[i][j] = a.get(i).equals(b.get(j)) ? common[i + 1][j + 1] + 1 : Math.max(common[i + 1][j], common[i][j + 1]);
            }
        }
        return common[0][0];
    }
}
