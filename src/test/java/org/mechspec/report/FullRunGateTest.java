package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.data.DataFiles;
import org.mechspec.spec.Contract;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;

/**
 * The traps a full run must not fall into: a declared paper whose contracts did not run, a committed reference with no
 * fresh artifact, a paper skipped for a missing data set. Each fails the gate with a line naming it; a partial run
 * (-Dgroups, -Dmechspec.seeds, -Dtest) and -Dmechspec.allowSkippedPapers=true let them pass.
 */
@Tag("platform")
class FullRunGateTest {
    @TempDir
    Path dir;
    Path contracts;
    Path out;
    Path reports;

    @BeforeEach
    void runTheFixtures() throws Exception {
        contracts = Files.createDirectories(dir.resolve("contracts"));
        reports = Files.createDirectories(dir.resolve("reports"));
        out = dir.resolve("out");
        Files.writeString(contracts.resolve("ran.json"), manifest("ran"));
        Files.writeString(contracts.resolve("unrun.json"), manifest("unrun"));
        Files.writeString(contracts.resolve("nodata.json"), manifest("nodata"));
        Files.writeString(reports.resolve("retired.cpu.json"), "{}");
        FixtureLauncher.run(Papers.class, Map.of("mechspec.contracts.dir", contracts.toString(), "mechspec.out", out.toString(),
                "allure.results.directory", dir.resolve("allure").toString(), "mechspec.backend", "cpu", "mechspec.seeds", ""));
        assertThat(out.resolve("ran.cpu.json")).exists();
    }

    private void gate(String... options) throws Exception {
        String[] args = new String[3 + options.length];
        args[0] = out.toString();
        args[1] = reports.toString();
        args[2] = contracts.toString();
        System.arraycopy(options, 0, args, 3, options.length);
        ReportGate.main(args);
    }

    @Test
    void aFullRunFailsNamingEachPaperWithoutArtifactAndEachMissingDataSet() throws Exception {
        assertThatThrownBy(() -> gate("update=false", "groups=${groups}", "seeds=", "test=${test}", "backend=auto"))
                .hasMessageContaining("missing from a full run")
                .hasMessageContaining("-Dmechspec.data.dir=DIR").hasMessageContaining("-Dmechspec.allowSkippedPapers=true");
        assertThat(ReportGate.notRun(out, reports, contracts, "cpu")).containsExactly(
                "nodata: no fresh artifact " + out.resolve("nodata.cpu.json") + " in this full run",
                "retired: no fresh artifact " + out.resolve("retired.cpu.json")
                        + " in this full run (reports/retired.cpu.json is committed) (and no contracts/retired.json declares it)",
                "unrun: no fresh artifact " + out.resolve("unrun.cpu.json") + " in this full run",
                "data missing: /nowhere/corpus.txt is absent: download the corpus to corpus.txt under the folder"
                        + " passed as -Dmechspec.data.dir");
        // A run on another backend must leave that backend's artifact of every declared paper.
        assertThat(ReportGate.notRun(out, reports, contracts, "cuda-emulated"))
                .contains("ran: no fresh artifact " + out.resolve("ran.cuda-emulated.json") + " in this full run");
    }

    @Test
    void everySeededHalfIsAFullRunWhateverElseTheGroupsAdd() {
        assertThatThrownBy(() -> gate("groups=seeded | cuda")).hasMessageContaining("missing from a full run");
        assertThat(ReportGate.everySeededHalf("seeded|cuda")).isTrue();
        assertThat(ReportGate.everySeededHalf("cuda, seeded")).isTrue();
        assertThat(ReportGate.everySeededHalf("seeded | (cuda & !emulator-process)")).as("CI's emulated pass").isTrue();
        assertThat(ReportGate.everySeededHalf("(seeded | cuda) & !emulator-process")).as("narrowed: & binds the whole").isFalse();
        assertThat(ReportGate.everySeededHalf("seeded & fold-bias")).isFalse();
        assertThat(ReportGate.everySeededHalf("seededish")).isFalse();
    }

    @Test
    void aPartialRunOrAnExplicitOptOutPasses() throws Exception {
        assertThatCode(() -> gate("groups=ran")).doesNotThrowAnyException();
        assertThatCode(() -> gate("seeds=42")).doesNotThrowAnyException();
        assertThatCode(() -> gate("test=Papers")).doesNotThrowAnyException();
        Files.copy(out.resolve("ran.cpu.json"), reports.resolve("ran.cpu.json"));
        assertThatCode(() -> gate("allowSkippedPapers=true")).doesNotThrowAnyException();
    }

    @Test
    void aFullRunFailsOnAFreshArtifactWithNoCommittedReferenceAPartialOneWarns() {
        // Nothing would judge its metrics: a new paper's first reference must be committed before a full run passes.
        assertThatThrownBy(() -> gate("allowSkippedPapers=true")).hasMessageContaining("ran.cpu.json: no committed reference "
                + reports.resolve("ran.cpu.json") + "; run with -Dmechspec.updateReports=true to create it");
        assertThatCode(() -> gate("groups=ran")).doesNotThrowAnyException();
    }

    @Test
    void aFullCpuRunNamesAPaperWithoutAnEmulatedReferenceWhereTheProjectKeepsThem() throws Exception {
        Files.copy(out.resolve("ran.cpu.json"), reports.resolve("ran.cpu.json"));
        assertThatCode(() -> gate("allowSkippedPapers=true")).as("no emulated references kept: nothing to name").doesNotThrowAnyException();
        // CI's emulated pass would fail on ran: green here, red there, until the CPU run says so.
        Files.writeString(reports.resolve("retired.cuda-emulated.json"), "{}");
        assertThatThrownBy(() -> gate("allowSkippedPapers=true")).hasMessageContaining("ran: no committed reference "
                + reports.resolve("ran.cuda-emulated.json") + " for the emulated CUDA pass CI runs")
                .hasMessageContaining("-Dmechspec.backend=cuda-emulated -Dgroups=ran -Dmechspec.updateReports=true");
        assertThatCode(() -> gate("groups=ran")).as("a narrowed run").doesNotThrowAnyException();
        Files.copy(out.resolve("ran.cpu.json"), reports.resolve("ran.cuda-emulated.json"));
        assertThatCode(() -> gate("allowSkippedPapers=true")).doesNotThrowAnyException();
    }

    private static String manifest(String paper) {
        return PartialRunTest.manifest(paper, "ran");
    }

    @Tag("launcher-fixture")
    static class Papers {
        @Contract(paper = "ran", check = "c")
        @Seeded
        void ran(SeedRun run) {
            run.metric("ran", 1.0);
        }

        @Contract(paper = "nodata", check = "c")
        @Seeded
        void nodata(SeedRun run) {
            String was = System.setProperty("mechspec.data.dir", "/nowhere");
            try {
                DataFiles.verifiedBytes("corpus.txt", "00", "the corpus");
            } finally {
                if (was == null) {
                    System.clearProperty("mechspec.data.dir");
                } else {
                    System.setProperty("mechspec.data.dir", was);
                }
            }
        }
    }
}
