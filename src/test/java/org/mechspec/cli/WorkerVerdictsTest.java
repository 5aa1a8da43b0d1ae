package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * Outside implementations judged end to end, as a user runs them ({@code mechspec run --implementation}): the NumPy
 * reference worker gets mechspec's own verdicts on every paper, with metrics within the manifests' tolerances of the
 * committed CPU references; each rejected worker (src/test/worker) is rejected by the check that names its fault, with
 * the figure that shows it.
 */
@Tag("worker")
// Last (junit-platform.properties): its runs take two cores, which CI's emulated pass has given back by then.
@Order(Integer.MAX_VALUE)
class WorkerVerdictsTest {
    private static final Path CLIENT = Path.of("src/main/worker/python").toAbsolutePath();
    private static final Path REJECTED = Path.of("src/test/worker").toAbsolutePath();
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    /** Every paper a worker can serve: those whose manifest lists operations (a new paper's join without a change here). */
    static final List<String> PAPERS = servablePapers();

    private static List<String> servablePapers() {
        Manifests manifests = Manifests.classpath();
        return manifests.papers().stream().filter(p -> !manifests.forPaper(p).operations().isEmpty()).toList();
    }

    /** A rejected worker, the paper it serves, the check that must reject it and the figure that shows its fault. */
    record Rejection(String worker, String paper, String check, String figure) {
    }

    static final List<Rejection> REJECTIONS = List.of(
            new Rejection("clamped_nnls_worker.py", "fold-bias", "nnls_kkt_conditions", "nnls_kkt_violation"),
            new Rejection("zero_attention_worker.py", "kernels", "attention_fp64_flash_rule", "attention_fp64_max_error"),
            new Rejection("zero_attention_worker.py", "kernels", "attention_fp32_flash_rule", "attention_fp32_max_error"),
            new Rejection("fp16_values_worker.py", "pn-mix", "byte_accounting_exact", "value_bytes"),
            new Rejection("scale_power_of_two_worker.py", "pn-mix", "quantizer_levels_exact", "quantizer_level_mismatches"));

    /** Output folders of the seed-42 runs shared by the tests that judge them ({@link #seed42}). */
    @TempDir
    static Path sharedRuns;

    private static final Map<String, Future<Run>> SEED_42_RUNS = new HashMap<>();

    /** Two runs at a time: each is a JVM and a worker taking turns, about one core between them. */
    private static ExecutorService runner;

    private record Run(ChildMain result, Path out) {
    }

    /** Every seed-42 run the tests judge starts now, two at a time; each test waits for its own. */
    @BeforeAll
    static void startTheSeed42Runs() {
        runner = Executors.newFixedThreadPool(2);
        for (String paper : PAPERS) {
            seed42Run(CLIENT.resolve("reference_worker.py"), paper, referenceFiles());
        }
        for (Rejection r : REJECTIONS) {
            seed42Run(REJECTED.resolve(r.worker()), r.paper());
        }
    }

    @AfterAll
    static void stopTheRunner() throws InterruptedException {
        runner.shutdownNow();
        assertThat(runner.awaitTermination(15, TimeUnit.MINUTES)).as("the seed-42 runs ended").isTrue();
    }

    private ChildMain run(String worker, String paper, String... more) throws Exception {
        return run(dir.resolve("out"), worker, paper, more);
    }

    private static ChildMain run(Path out, String worker, String paper, String... more) throws Exception {
        return run(out, "python3", worker, paper, more);
    }

    private static ChildMain run(Path out, String python, String worker, String paper, String... more) throws Exception {
        // From a folder of its own, as a user runs the installed command anywhere: the launcher names the fixtures and
        // reports folders (bin/mechspec), and nothing may be found through the working folder (the verdicts must be the
        // same from any folder).
        Path elsewhere = Files.createDirectories(out.resolveSibling(out.getFileName() + "-cwd"));
        List<String> args = new ArrayList<>(List.of("run", "--implementation", python + " " + worker, "--paper", paper, "--out",
                out.toString(),
                "--quiet", "--data-dir", Path.of(System.getProperty("mechspec.data.dir", "../shared/data")).toAbsolutePath().toString()));
        args.addAll(List.of(more));
        List<String> launcher = List.of("-Dmechspec.fixtures.dir=" + Path.of("fixtures").toAbsolutePath(),
                "-Dmechspec.reports.dir=" + Path.of("reports").toAbsolutePath());
        return ChildMain.run(elsewhere, 15, Main.class.getName(), launcher, args.toArray(String[]::new));
    }

    @ParameterizedTest
    @FieldSource("PAPERS")
    void theReferenceWorkerGetsMechspecsOwnVerdicts(String paper) throws Exception {
        // One seed: every operation the paper serves and every check runs on it; mechspec's own build runs all three.
        Run run = seed42(CLIENT.resolve("reference_worker.py"), paper, referenceFiles());
        ChildMain r = run.result();
        assertThat(r.code()).as(r.out()).isZero();
        Path artifact = run.out().resolve("reports/" + paper + ".numpy-reference.json");
        JsonNode served = JSON.readTree(artifact.toFile()).path("mechspec").path("device_provenance").path("implementation");
        assertThat(served.path("operations_served")).as("the worker computed part of %s", paper).isNotEmpty();
        assertThat(served.path("files_sha256")).hasSize(2);
        Cli validate = Cli.run("validate", artifact.toString());
        assertThat(validate.code()).as(validate.toString()).isZero();
        // Same checks held, every metric within the manifest's tolerance of mechspec's own CPU run (ArtifactDiff: the
        // device-side checks only the worker ran, and the implementation's own error figures, are judged by their bounds).
        Cli diff = Cli.run("diff", "--seeds", "42", artifact.toString(), "reports/" + paper + ".cpu.json");
        assertThat(diff.code()).as(diff.toString()).isZero();
    }

    /** An implementation's artifacts are artifacts like mechspec's: seed shards merge, and the merge validates. */
    @Test
    void shardsOfAnImplementationsRunMergeAndValidate() throws Exception {
        Run a = seed42(CLIENT.resolve("reference_worker.py"), "kernels", referenceFiles()); // the reference test's run
        assertThat(a.result().code()).as(a.result().out()).isZero();
        List<String> rest = new ArrayList<>(List.of("--seeds", "43,44"));
        rest.addAll(List.of(referenceFiles()));
        ChildMain b = run(CLIENT.resolve("reference_worker.py").toString(), "kernels", rest.toArray(String[]::new));
        assertThat(b.code()).as(b.out()).isZero();
        Path merged = dir.resolve("kernels.numpy-reference.json");
        Cli merge = Cli.run("merge", a.out().resolve("reports/kernels.numpy-reference.json").toString(),
                dir.resolve("out/reports/kernels.numpy-reference.json").toString(), "--out", merged.toString());
        assertThat(merge.code()).as(merge.toString()).isZero();
        Cli validate = Cli.run("validate", merged.toString());
        assertThat(validate.code()).as(validate.toString()).isZero();
        assertThat(JSON.readTree(merged.toFile()).path("mechspec").path("seeds").size()).isEqualTo(3);
    }

    /** {@code worker}'s run of {@code paper} on seed 42, once for every test that judges it. */
    private static Run seed42(Path worker, String paper, String... more) throws Exception {
        return seed42Run(worker, paper, more).get();
    }

    private static Future<Run> seed42Run(Path worker, String paper, String... more) {
        return seed42Run("python3", worker, paper, more);
    }

    private static synchronized Future<Run> seed42Run(String python, Path worker, String paper, String... more) {
        return SEED_42_RUNS.computeIfAbsent(python + " " + worker + " " + paper + " " + String.join(" ", more), key -> {
            Path out = sharedRuns.resolve("run-" + SEED_42_RUNS.size());
            List<String> args = new ArrayList<>(List.of("--seeds", "42"));
            args.addAll(List.of(more));
            return runner.submit(() -> new Run(run(out, python, worker.toString(), paper, args.toArray(String[]::new)), out));
        });
    }

    private static String[] referenceFiles() {
        return new String[] {"--implementation-files", CLIENT.resolve("reference_worker.py") + "," + CLIENT.resolve("mechspec_worker.py")};
    }

    /** QuickTheories shrinks through the worker: the falsified property names the smallest input it got wrong. */
    @Test
    void aFalsifiedPropertyReportsTheSmallestInputTheWorkerGotWrong() throws Exception {
        ChildMain r = seed42(REJECTED.resolve("zero_attention_worker.py"), "kernels").result();
        assertThat(r.out()).contains("FAILED KernelContracts > fp64AttentionWithinBoundOverRegimes(PropertyRun): Property falsified")
                .contains("Smallest found falsifying value(s) :- ORDINARY B=1 Hq=1 Hkv=1 Tq=1 Tk=1 D=1 Dv=1 causal=false bias=false")
                .contains("attention_fp64_max_error = "); // the failing figure leads the line
    }

    /**
     * A run stopped from outside while its worker hangs exits and takes the worker's whole process tree with it. The
     * JVM handles Ctrl-C's SIGINT and SIGTERM alike (shutdown hooks); the test sends SIGTERM because a process started
     * in the background inherits an ignored SIGINT.
     */
    @Test
    void stoppingARunLeavesNothingOfTheWorkerRunning() throws Exception {
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), Main.class.getName(), "run", "--implementation",
                "python3 " + REJECTED.resolve("misbehaving_worker.py") + " hang", "--paper", "kernels", "--seeds", "42", "--quiet",
                "--out", dir.resolve("out").toString());
        Process run = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("run.log").toFile()).start();
        List<ProcessHandle> worker = List.of();
        for (long deadline = System.nanoTime() + 60_000_000_000L; worker.isEmpty() && System.nanoTime() < deadline; Thread.sleep(200)) {
            worker = run.descendants().filter(h -> h.info().commandLine().orElse("").contains("misbehaving_worker")).toList();
        }
        assertThat(worker).as("the worker started: %s", Files.readString(dir.resolve("run.log"))).isNotEmpty();
        List<ProcessHandle> tree = run.descendants().toList();
        new ProcessBuilder("kill", "-TERM", Long.toString(run.pid())).start().waitFor();
        assertThat(run.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).as("the run ends on SIGTERM").isTrue();
        for (ProcessHandle p : tree) {
            p.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(p.isAlive()).as("pid %d (%s)", p.pid(), p.info().commandLine().orElse("?")).isFalse();
        }
    }

    /**
     * The documentation's PyTorch example (CUDA when there is one), where PyTorch is installed: on seed 42 of each paper
     * whose mechanism calls {@code attention} (kernels, fold-bias; pn-mix's attention is {@code pnmix.attend} over the
     * packed cache, and its oracle is mechspec's, so the example computes nothing of it), every check it reaches holds,
     * seeded and property halves — through
     * scaled_dot_product_attention on PyTorch 2.1 and later, through its explicit form on older ones (Debian 12's 1.13).
     */
    @Test
    void thePyTorchExampleHoldsEveryCheckOfThePapersThatCallAttention() throws Exception {
        String python = torchPython();
        // CI installs Debian's python3-torch (.ci/run): there the example must run, not be skipped.
        if (System.getenv("CI") != null) {
            assertThat(python).as("CI: neither python3 nor /usr/bin/python3 imports torch and numpy").isNotNull();
        }
        assumeTrue(python != null, "PyTorch is not importable by python3 here (Debian: apt-get install python3-torch)");
        Path worker = CLIENT.resolve("examples/torch_worker.py");
        List<String> papers = List.of("kernels", "fold-bias");
        for (String paper : papers) {
            seed42Run(python, worker, paper); // both start now, two at a time; each is judged below as it ends
        }
        for (String paper : papers) {
            Run run = seed42Run(python, worker, paper).get();
            ChildMain r = run.result();
            assertThat(r.code()).as(r.out()).isZero();
            Path artifact;
            try (var files = Files.list(run.out().resolve("reports"))) {
                artifact = files.filter(f -> f.getFileName().toString().matches(paper + "\\.torch-(sdpa|explicit)-(cpu|cuda)\\.json"))
                        .findFirst().orElseThrow();
            }
            JsonNode mechspec = JSON.readTree(artifact.toFile()).path("mechspec");
            assertThat(mechspec.path("device_provenance").path("implementation").path("operations_served"))
                    .as("the worker computed part of %s", paper).isNotEmpty();
            for (JsonNode checks : List.of(mechspec.at("/seeds/42/checks"), mechspec.path("property_checks"))) {
                assertThat(checks).as("%s's checks: %s", paper, r.out()).isNotEmpty();
                checks.properties().forEach(check -> assertThat(check.getValue().asBoolean(false))
                        .as("%s %s held: %s", paper, check.getKey(), r.out()).isTrue());
            }
        }
    }

    /**
     * The interpreter that imports torch and numpy: {@code python3}, else Debian's {@code /usr/bin/python3} (where
     * {@code python3} on the PATH is another installation that cannot see Debian's python3-torch); null when neither.
     */
    private static String torchPython() throws Exception {
        for (String python : List.of("python3", "/usr/bin/python3")) {
            try {
                Process probe = new ProcessBuilder(python, "-c", "import torch, numpy").redirectErrorStream(true).start();
                probe.getInputStream().readAllBytes();
                if (probe.waitFor() == 0) {
                    return python;
                }
            } catch (java.io.IOException e) {
                // Not installed.
            }
        }
        return null;
    }

    @ParameterizedTest
    @FieldSource("REJECTIONS")
    void aRejectedWorkerIsRejectedByTheCheckThatNamesItsFault(Rejection rejection) throws Exception {
        String worker = rejection.worker();
        String paper = rejection.paper();
        String check = rejection.check();
        String figure = rejection.figure();
        Run run = seed42(REJECTED.resolve(worker), paper);
        ChildMain r = run.result();
        assertThat(r.code()).as(r.out()).isEqualTo(ExitCodes.FINDINGS);
        Path reports = run.out().resolve("reports");
        Path artifact;
        try (var files = Files.list(reports)) {
            artifact = files.filter(f -> f.getFileName().toString().startsWith(paper + ".") && f.toString().endsWith(".json")).findFirst().orElseThrow();
        }
        JsonNode seed = JSON.readTree(artifact.toFile()).path("mechspec").path("seeds").path("42");
        assertThat(seed.path("checks").path(check).asBoolean(true)).as("%s rejects %s: %s", check, worker, r.out()).isFalse();
        JsonNode ours = JSON.readTree(Path.of("reports/" + paper + ".cpu.json").toFile()).path("mechspec").path("seeds").path("42");
        assertThat(seed.path("metrics").path(figure).asDouble()).as("%s, against mechspec's own %s", figure, ours.path("metrics").path(figure))
                .isNotEqualTo(ours.path("metrics").path(figure).asDouble());
        assertThat(r.out()).contains(check);
        // And against mechspec's own run, the verdict is a finding too.
        Cli diff = Cli.run("diff", "--seeds", "42", artifact.toString(), "reports/" + paper + ".cpu.json");
        assertThat(diff.code()).as(diff.toString()).isEqualTo(ExitCodes.FINDINGS);
        assertThat(diff.toString()).contains(".checks." + check + ": false");
    }
}
