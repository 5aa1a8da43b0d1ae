package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The judge's own mutation test: a corpus of outside implementations (src/test/worker/corpus/, listed in corpus.json),
 * each wrong one carrying a bug class that real attention and KV-cache implementations shipped (the source names the
 * public report), each right one correct in its own way (own bit order, SciPy's NNLS, a blocked online softmax, another
 * accumulation order, …). Each runs as a user runs it ({@code mechspec run --implementation}, seed 42, from a folder of
 * its own): a wrong one must fail exactly the checks the corpus names for it — no fewer (a false acceptance), no more (a
 * verdict blaming a part it did not break); a right one must hold every check. A wrong verdict either way fails CI.
 */
@Tag("worker")
@Order(Integer.MAX_VALUE - 1)
class JudgeCorpusTest {
    static final Path CORPUS = Path.of("src/test/worker/corpus").toAbsolutePath();
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * Pinned: the corpus asserts exact verdicts, so its property halves draw the same inputs every run (which checks a
     * bug reaches can depend on the draw); the rest of the build explores new inputs each run.
     */
    static final String PROPERTY_SEED = "20261205";

    /** One corpus entry: the worker file, the paper it is judged on, and the checks that must reject it (none: right). */
    record Entry(String file, String paper, List<String> rejectedBy, String bugClass, String source) {
        boolean right() {
            return rejectedBy.isEmpty();
        }

        @Override
        public String toString() {
            return file + " on " + paper + (right() ? " (right: holds every check)" : " (rejected by " + String.join(", ", rejectedBy) + ")");
        }
    }

    static List<Entry> corpus() {
        try {
            List<Entry> out = new ArrayList<>();
            for (JsonNode e : JSON.readTree(CORPUS.resolve("corpus.json").toFile())) {
                List<String> checks = new ArrayList<>();
                e.path("rejected_by").forEach(c -> checks.add(c.asText()));
                out.add(new Entry(e.path("file").asText(), e.path("paper").asText(), List.copyOf(checks), e.path("bug_class").asText(),
                        e.path("source").asText("")));
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private record Run(ChildMain result, Path out) {
    }

    private static final Map<String, Future<Run>> RUNS = new ConcurrentHashMap<>();
    private static ExecutorService runner;
    private static Path runs;

    /** Every corpus run starts now, two at a time (a JVM and a worker taking turns); each test awaits its own. */
    @BeforeAll
    static void startTheRuns() throws IOException {
        runs = Files.createTempDirectory("mechspec-corpus-");
        runner = Executors.newFixedThreadPool(2);
        for (Entry e : corpus()) {
            Path out = runs.resolve(e.file().replace(".py", ""));
            RUNS.put(e.file(), runner.submit(() -> new Run(run(e, out), out)));
        }
    }

    @AfterAll
    static void stopTheRunner() throws Exception {
        runner.shutdownNow();
        assertThat(runner.awaitTermination(15, TimeUnit.MINUTES)).as("the corpus runs ended").isTrue();
        try (var s = Files.walk(runs)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private static ChildMain run(Entry e, Path out) throws Exception {
        Path elsewhere = Files.createDirectories(out.resolveSibling(out.getFileName() + "-cwd"));
        List<String> launcher = List.of("-Dmechspec.fixtures.dir=" + Path.of("fixtures").toAbsolutePath(),
                "-Dmechspec.reports.dir=" + Path.of("reports").toAbsolutePath());
        return ChildMain.run(elsewhere, 15, Main.class.getName(), launcher, "run", "--implementation",
                "python3 " + CORPUS.resolve(e.file()), "--paper", e.paper(), "--seeds", "42", "--property-seed", PROPERTY_SEED, "--quiet", "--out", out.toString(),
                "--data-dir", Path.of(System.getProperty("mechspec.data.dir", "../shared/data")).toAbsolutePath().toString());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("corpus")
    void theJudgesVerdictIsRightBothWays(Entry e) throws Exception {
        Run run = RUNS.get(e.file()).get();
        ChildMain r = run.result();
        assertThat(failedChecks(run.out().resolve("summary.md"))).as("checks that failed for %s (%s): %s", e.file(), e.bugClass(), r.out())
                .containsExactlyInAnyOrderElementsOf(e.rejectedBy());
        assertThat(r.code()).as(r.out()).isEqualTo(e.right() ? 0 : ExitCodes.FINDINGS);
        if (e.right()) {
            assertThat(run.out().resolve("reports/" + e.paper() + "." + artifactId(run) + ".json")).as("a right one's artifact").exists();
        }
    }

    /** The worker's id, from the one artifact a right run writes. */
    private static String artifactId(Run run) throws IOException {
        try (var files = Files.list(run.out().resolve("reports"))) {
            return files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".json")).findFirst().orElse("?.none.json")
                    .replaceFirst("^[^.]+\\.", "").replaceFirst("\\.json$", "");
        }
    }

    /**
     * The checks the run's summary marks failed (seeded half on seed 42, or property half): read from summary.md, which
     * every run writes, since a wrong implementation can stop a paper's protocol before its artifact has every metric.
     */
    static TreeSet<String> failedChecks(Path summary) throws IOException {
        TreeSet<String> failed = new TreeSet<>();
        java.util.regex.Pattern line = java.util.regex.Pattern.compile("^- ✗ ([a-z0-9_]+):");
        for (String l : Files.readAllLines(summary)) {
            java.util.regex.Matcher m = line.matcher(l);
            if (m.find()) {
                failed.add(m.group(1));
            }
        }
        return failed;
    }
}
