package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.spec.Contract;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;

/**
 * A run in which one paper's artifact cannot be rendered (its contracts ran only in part, as with -Dgroups=gpu):
 * the listener used to throw, JUnit only logged it, the other papers and Allure's environment were lost and the
 * build stayed green. Now every other artifact is written, and the failure is a line the report gate fails on.
 */
@Tag("platform")
class PartialRunTest {
    @TempDir
    Path dir;

    @Test
    void aPaperThatCannotBeRenderedFailsTheGateAndLosesNoOtherArtifact() throws Exception {
        Path contracts = Files.createDirectories(dir.resolve("contracts"));
        Path out = dir.resolve("out");
        // "apartial" sorts first: the paper that fails must not stop the ones after it.
        Files.writeString(contracts.resolve("apartial.json"), manifest("apartial", "never_recorded"));
        Files.writeString(contracts.resolve("whole.json"), manifest("whole", "ran"));
        Map<String, String> props = Map.of("mechspec.contracts.dir", contracts.toString(), "mechspec.out", out.toString(),
                "allure.results.directory", dir.resolve("allure").toString(), "mechspec.backend", "cpu", "mechspec.seeds", "");
        FixtureLauncher.run(TwoPapers.class, props);
        assertThat(out.resolve("whole.cpu.json")).exists();
        assertThat(out.resolve("apartial.cpu.json")).doesNotExist();
        assertThat(dir.resolve("allure/environment.properties")).exists();
        assertThat(ListenerErrors.read(out)).singleElement().asString()
                .startsWith("apartial.cpu: artifact not written").contains("never_recorded")
                .doesNotContain("partial run"); // its one declared check ran: no hint at a partial run that was not one
        assertThatThrownBy(() -> ReportGate.main(new String[] {out.toString(), dir.resolve("reports").toString(),
                contracts.toString(), "false"})).hasMessageContaining("apartial.cpu: artifact not written");
    }

    /** A one-check manifest whose template places the mean of {@code metric} (declared: ran, never_recorded). */
    static String manifest(String paper, String metric) {
        return """
                {"paper": "%s", "title": "t", "seeds": [42], "dataset": {}, "protocol": {}, "claim_policy": {},
                 "limitations": [], "sources": [], "checks": [{"name": "c", "description": "d"}],
                 "metrics": [{"name": "ran"}, {"name": "never_recorded"}],
                 "artifact": {"m": {"$stat": {"metric": "%s", "stat": "mean"}}}}
                """.formatted(paper, metric);
    }

    @Tag("launcher-fixture")
    static class TwoPapers {
        @Contract(paper = "apartial", check = "c")
        @Seeded
        void partial(SeedRun run) {
            run.metric("ran", 1.0);
        }

        @Contract(paper = "whole", check = "c")
        @Seeded
        void whole(SeedRun run) {
            run.metric("ran", 1.0);
        }
    }
}
