package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.mechspec.data.DataFiles;
import org.mechspec.spec.Contract;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;

/**
 * Two ways a run used to look fine: a check whose declared figure was never recorded passed on every seed (its Allure
 * step silently missing), and a paper whose protocol could not run (a data file with the wrong hash) still got an
 * artifact with no metrics and every check false, which the summary listed without a reason.
 */
@Tag("platform")
class NoSilentGreenTest {
    @TempDir
    Path dir;

    private final Map<String, TestExecutionResult> results = new HashMap<>();

    @Test
    void aDeclaredFigureThatWasNotRecordedFailsItsCheckNamingCheckFigureAndSeed() throws Exception {
        Path out = launch(FigureNotRecorded.class, "figures", """
                [{"name": "held", "threshold": 1, "description": "d", "figures": [{"metric": "x", "op": "<=", "bound": "threshold"}]},
                 {"name": "forgot", "threshold": 1, "description": "d", "figures": [{"metric": "x", "op": "<=", "bound": "threshold * y"}]}]""");
        assertThat(results).containsOnlyKeys("held", "forgot");
        assertThat(results.get("held").getStatus()).isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
        assertThat(results.get("forgot").getThrowable().orElseThrow()).isInstanceOf(AssertionError.class)
                .hasMessage("figures/forgot: declared figure y (in the bound of x) was not recorded on seed 42 (cpu)");
        JsonNode checks = PaperRun.JSON.readTree(out.resolve("figures.cpu.json").toFile()).path("mechspec").path("seeds").path("42").path("checks");
        assertThat(checks.path("held").asBoolean()).isTrue();
        assertThat(checks.path("forgot").asBoolean(true)).isFalse();
    }

    @Test
    void aProtocolThatCouldNotRunWritesNoArtifactAndTheSummarySaysWhy() throws Exception {
        Path out = launch(BadData.class, "baddata", """
                [{"name": "a", "description": "d"}, {"name": "b", "description": "d"}]""");
        assertThat(out.resolve("baddata.cpu.json")).doesNotExist();
        String why = "the protocol did not run on seed 42: /d/hamlet/hamlet.txt has SHA-256 00, expected 11: wrong or corrupted file";
        assertThat(ListenerErrors.read(out)).singleElement().asString().startsWith("baddata.cpu: artifact not written: " + why);
        assertThat(Files.readString(out.resolveSibling("summary.md"))).contains("- artifact not written: " + why)
                .doesNotContain("baddata.cpu.json");
    }

    @Test
    void aBuildWhoseOutputLiesInsideTheCommittedReportsWritesNothingThere() throws Exception {
        Path inside = Path.of("reports", "never-" + ProcessHandle.current().pid());
        Path contracts = Files.createDirectories(dir.resolve("contracts"));
        Files.writeString(contracts.resolve("guarded.json"), """
                {"paper": "guarded", "title": "t", "seeds": [42], "dataset": {}, "protocol": {}, "claim_policy": {},
                 "limitations": [], "sources": [], "checks": [{"name": "c", "description": "d"}],
                 "metrics": [{"name": "x"}], "artifact": {"n": "$seeds"}}
                """);
        java.io.ByteArrayOutputStream printed = new java.io.ByteArrayOutputStream();
        java.io.PrintStream was = System.out;
        System.setOut(new java.io.PrintStream(printed, true, java.nio.charset.StandardCharsets.UTF_8));
        try {
            FixtureLauncher.run(Guarded.class, Map.of("mechspec.contracts.dir", contracts.toString(), "mechspec.out",
                    inside.toString(), "allure.results.directory", dir.resolve("allure").toString(), "mechspec.backend", "cpu",
                    "mechspec.seeds", ""));
        } finally {
            System.setOut(was);
        }
        assertThat(inside).doesNotExist();
        assertThat(printed.toString(java.nio.charset.StandardCharsets.UTF_8))
                .contains("[mechspec] ERROR -Dmechspec.out=" + inside + " refused: it lies inside the committed ");
    }

    private Path launch(Class<?> fixture, String paper, String checks) throws Exception {
        Path contracts = Files.createDirectories(dir.resolve("contracts"));
        Path out = dir.resolve("run/reports");
        Files.writeString(contracts.resolve(paper + ".json"), """
                {"paper": "%s", "title": "t", "seeds": [42], "dataset": {}, "protocol": {}, "claim_policy": {},
                 "limitations": [], "sources": [], "checks": %s,
                 "metrics": [{"name": "x"}, {"name": "y"}], "artifact": {"n": "$seeds"}}
                """.formatted(paper, checks));
        FixtureLauncher.run(fixture, Map.of("mechspec.contracts.dir", contracts.toString(), "mechspec.out", out.toString(),
                "allure.results.directory", dir.resolve("run/allure-results").toString(), "mechspec.backend", "cpu", "mechspec.seeds", ""),
                new TestExecutionListener() {
                    @Override
                    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                        if (id.isTest()) {
                            results.put(id.getUniqueId().replaceAll(".*test-template:(\\w+)\\(.*", "$1"), result);
                        }
                    }
                });
        return out;
    }

    @org.junit.jupiter.api.Tag("launcher-fixture")
    static class FigureNotRecorded {
        /** Both record x only: enough for held's figure, not for forgot's, whose bound also names y. */
        @Contract(paper = "figures", check = "held")
        @Seeded
        void held(SeedRun run) {
            run.metric("x", 0.5).check(true);
        }

        @Contract(paper = "figures", check = "forgot")
        @Seeded
        void forgot(SeedRun run) {
            run.metric("x", 0.5).check(true);
        }
    }

    @org.junit.jupiter.api.Tag("launcher-fixture")
    static class Guarded {
        @Contract(paper = "guarded", check = "c")
        @Seeded
        void c(SeedRun run) {
            run.metric("x", 1.0);
        }
    }

    @org.junit.jupiter.api.Tag("launcher-fixture")
    static class BadData {
        /** What the data layer throws for a file that fails its hash, before anything is recorded. */
        private static final String ALTERED = "/d/hamlet/hamlet.txt has SHA-256 00, expected 11: wrong or corrupted file";

        @Contract(paper = "baddata", check = "a")
        @Seeded
        void a(SeedRun run) {
            throw new DataFiles.DataIntegrityException(ALTERED);
        }

        @Contract(paper = "baddata", check = "b")
        @Seeded
        void b(SeedRun run) {
            throw new DataFiles.DataIntegrityException(ALTERED);
        }
    }
}
