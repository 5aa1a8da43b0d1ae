package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.report.PaperRun;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;

/** {@code mechspec diff}: one line per metric or check beyond the manifest tolerance, exit 1 on drift. */
@Tag("cli")
class DiffCommandTest {
    @TempDir
    Path dir;
    Path contracts;
    Manifest manifest;

    @BeforeEach
    void setUp() {
        contracts = SyntheticManifests.write(dir.resolve("contracts"));
        manifest = ManifestLoader.load(contracts.resolve("demo.json"));
    }

    Path artifact(String name, PaperRun run) {
        return Artifacts.write(dir.resolve(name), Artifacts.render(manifest, run, "c0ffee"));
    }

    Cli diff(Path a, Path b) {
        return Cli.run("diff", "--contracts", contracts.toString(), a.toString(), b.toString());
    }

    @Test
    void sameMetricsOnAnotherCommitAndDeviceIsNoDrift() {
        PaperRun elsewhere = Artifacts.demoRun("cpu", 42, 43, 44);
        elsewhere.device = "another machine";
        Path a = Artifacts.write(dir.resolve("a.json"), Artifacts.render(manifest, elsewhere, "decade"));
        Cli r = diff(a, artifact("b.json", Artifacts.demoRun("cpu", 42, 43, 44)));
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out().strip()).isEqualTo("no drift: demo.cpu, seeds [42, 43, 44], within the tolerances of " + contracts.resolve("demo.json"));
    }

    @Test
    void differenceWithinToleranceIsNoDriftAndBeyondItIs() {
        Path reference = artifact("ref.json", Artifacts.demoRun("cpu", 42, 43, 44));
        PaperRun close = Artifacts.demoRun("cpu", 42, 43, 44);
        close.seed(42).metrics.put("err", 42e-15 + 0.5e-12);
        assertThat(diff(artifact("close.json", close), reference).code()).isZero();
        PaperRun far = Artifacts.demoRun("cpu", 42, 43, 44);
        far.seed(43).metrics.put("err", 43e-15 + 2e-12);
        far.seed(44).metrics.put("bytes", 1025L);
        Cli r = diff(artifact("far.json", far), reference);
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.out().lines()).contains(
                "mechspec.seeds.43.metrics.err: 2.043E-12 vs reference 4.3000000000000006E-14 (|diff| 2.00e-12 > tolerance 1.00e-12)",
                "mechspec.seeds.44.metrics.bytes: 1025 vs reference 1024 (|diff| 1.00 > tolerance 1.02e-06)",
                "drift: 2 finding(s) between " + dir.resolve("far.json") + " and " + reference);
    }

    @Test
    void flippedCheckAndMissingSeedAreDrift() {
        PaperRun flipped = Artifacts.demoRun("cpu", 42, 43);
        flipped.seed(42).outcome("bounded", false);
        Cli r = diff(artifact("flipped.json", flipped), artifact("ref.json", Artifacts.demoRun("cpu", 42, 43, 44)));
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.out()).contains("mechspec.seeds: [42, 43] vs reference [42, 43, 44]", "mechspec.seeds.42.checks.bounded: false vs reference true");
    }

    /** A one-seed run against a full reference: --seeds compares those seeds, still drift by drift, and needs them on both sides. */
    @Test
    void seedsNarrowTheComparisonToSeedsBothHave() {
        Path reference = artifact("ref.json", Artifacts.demoRun("cpu", 42, 43, 44));
        PaperRun one = Artifacts.demoRun("cpu", 42);
        Cli same = Cli.run("diff", "--contracts", contracts.toString(), "--seeds", "42", artifact("one.json", one).toString(), reference.toString());
        assertThat(same.code()).as(same.toString()).isZero();
        assertThat(same.out()).contains("no drift: demo.cpu, seeds [42]");
        one.seed(42).outcome("bounded", false);
        Cli flipped = Cli.run("diff", "--contracts", contracts.toString(), "--seeds", "42", artifact("flipped.json", one).toString(), reference.toString());
        assertThat(flipped.code()).isEqualTo(1);
        assertThat(flipped.out()).contains("mechspec.seeds.42.checks.bounded: false vs reference true").doesNotContain("mechspec.seeds: ");
        Cli absent = Cli.run("diff", "--contracts", contracts.toString(), "--seeds", "42,43", artifact("one.json", one).toString(), reference.toString());
        assertThat(absent.code()).isEqualTo(2);
        assertThat(absent.err().strip()).isEqualTo("mechspec: " + dir.resolve("one.json") + " has no seed [43] (it has [42])");
    }

    @Test
    void otherBackendIsAFinding() {
        Cli r = diff(artifact("cuda.json", Artifacts.demoRun("cuda", 42)), artifact("cpu.json", Artifacts.demoRun("cpu", 42)));
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.out()).contains("mechspec: comparing demo.cuda with demo.cpu");
    }

    @Test
    void differentPapersAreRefusedNotDrift() {
        Path oal = Path.of(SyntheticManifests.OAL_SEED);
        Path demo = artifact("demo.json", Artifacts.demoRun("cpu", 42));
        Cli r = diff(oal, demo);
        assertThat(r.code()).as(r.toString()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("mechspec: cannot compare artifacts of different papers: " + oal + " is oal, " + demo + " is demo");
        assertThat(r.out()).doesNotContain("drift");
    }

    @Test
    void differentManifestVersionsAreNoted() {
        Manifest edited = ManifestLoader.parse("demo.json", SyntheticManifests.DEMO.replace("Three seeds are few.", "Few seeds."));
        Path a = Artifacts.write(dir.resolve("a.json"), Artifacts.render(edited, Artifacts.demoRun("cpu", 42), "c0ffee"));
        Cli r = diff(a, artifact("b.json", Artifacts.demoRun("cpu", 42)));
        assertThat(r.code()).isZero();
        assertThat(r.out()).contains("note: the two artifacts were made with different versions of");
    }

    @Test
    void seedFilesWithoutMechspecBlockAreReadThroughTheTemplate() {
        Path seed = Path.of(SyntheticManifests.OAL_SEED);
        assertThat(diff(seed, seed).code()).isZero();
        Path changed = Artifacts.edit(seed, dir.resolve("oal.json"), a -> {
            ((ObjectNode) a.at("/per_seed/0")).put("oal_test_ppl", 41.5);
            ((ObjectNode) a.at("/seed_results/0")).put("oal_test_ppl", 41.5);
        });
        Cli r = diff(changed, seed);
        assertThat(r.code()).isEqualTo(1);
        assertThat(r.out()).contains("mechspec.seeds.42.metrics.oal_test_ppl: 41.5 vs reference 41.07818607477422");
    }

    @Test
    void badInputExitsTwoWithOneLine() throws Exception {
        Path ok = artifact("ok.json", Artifacts.demoRun("cpu", 42));
        Cli missing = diff(ok, dir.resolve("gone.json"));
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err().strip()).isEqualTo("mechspec: " + dir.resolve("gone.json") + ": no such file");
        Path invalid = Files.writeString(dir.resolve("invalid.json"), "{]");
        assertThat(diff(invalid, ok).code()).isEqualTo(2);
        assertThat(diff(invalid, ok).err()).startsWith("mechspec: " + invalid + ": invalid JSON at line 1").hasLineCount(1);
        Path unknown = Files.writeString(dir.resolve("unknown.json"), "{\"method\": \"nobody\"}");
        assertThat(diff(unknown, ok).err()).contains(unknown + ": unknown paper");
        Path badBlock = Files.writeString(dir.resolve("bad-block.json"), "{\"mechspec\": {\"paper\": \"demo\", \"seeds\": {\"x\": {}}}}");
        Cli r = diff(badBlock, ok);
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains(badBlock + ": unreadable mechspec block");
        assertThat(Cli.run("diff", ok.toString()).code()).isEqualTo(2);
    }
}
