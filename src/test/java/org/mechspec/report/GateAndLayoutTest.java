package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;

@Tag("platform")
class GateAndLayoutTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Manifest MANIFEST = ManifestLoader.parse("demo.json", """
            {"paper": "demo", "title": "t", "seeds": [42, 43], "dataset": {}, "protocol": {}, "claim_policy": {},
             "limitations": [], "sources": [], "checks": [{"name": "c", "description": "d"}],
             "metrics": [{"name": "err", "tolerance": {"abs": 1e-12, "rel": 0}}, {"name": "bytes"}], "artifact": {}}
            """);

    private static PaperRun run(double err, long bytes, boolean check) {
        PaperRun r = new PaperRun("demo", "cpu");
        for (long seed : new long[] {42, 43}) {
            r.seed(seed).metrics.put("err", err);
            r.seed(seed).metrics.put("bytes", bytes);
            r.seed(seed).outcome("c", check);
        }
        return r;
    }

    @Test
    void identicalRunsHaveNoDrift() {
        assertThat(ArtifactDiff.compare(MANIFEST, run(1e-15, 100, true), run(1e-15, 100, true))).isEmpty();
        assertThat(ArtifactDiff.compare(MANIFEST, run(1.5e-15, 100, true), run(1e-15, 100, true))).isEmpty();
    }

    @Test
    void mutantDriftBeyondToleranceChangedBytesAndFlippedCheckAreEachReported() {
        assertThat(ArtifactDiff.compare(MANIFEST, run(1e-11, 100, true), run(1e-15, 100, true)))
                .anyMatch(f -> f.startsWith("mechspec.seeds.42.metrics.err:"));
        assertThat(ArtifactDiff.compare(MANIFEST, run(1e-15, 101, true), run(1e-15, 100, true)))
                .anyMatch(f -> f.startsWith("mechspec.seeds.43.metrics.bytes:"));
        assertThat(ArtifactDiff.compare(MANIFEST, run(1e-15, 100, false), run(1e-15, 100, true)))
                .anyMatch(f -> f.startsWith("mechspec.seeds.42.checks.c:"));
    }

    @Test
    void aRunWithTheEmulatorsAdversarialMathIsJudgedByItsCheckOutcomesNotItsMetricValues() {
        PaperRun reference = run(1e-15, 100, true);
        reference.device = "mechspec CUDA emulator (CPU)";
        PaperRun adversarial = run(1e-11, 101, true);
        adversarial.device = "mechspec CUDA emulator (CPU, adversarial math, seed 7)";
        assertThat(ArtifactDiff.compare(MANIFEST, adversarial, reference)).isEmpty();
        PaperRun failing = run(1e-11, 101, false);
        failing.device = adversarial.device;
        assertThat(ArtifactDiff.compare(MANIFEST, failing, reference)).containsExactly("mechspec.seeds.42.checks.c: false vs reference true",
                "mechspec.seeds.43.checks.c: false vs reference true");
        // Host math, or another device altogether: metric values are compared as ever.
        PaperRun host = run(1e-11, 100, true);
        host.device = reference.device;
        assertThat(ArtifactDiff.compare(MANIFEST, host, reference)).anyMatch(f -> f.startsWith("mechspec.seeds.42.metrics.err:"));
        PaperRun otherCpu = run(1e-11, 100, true);
        otherCpu.device = "a CPU with adversarial math in its name";
        assertThat(ArtifactDiff.compare(MANIFEST, otherCpu, reference)).anyMatch(f -> f.startsWith("mechspec.seeds.42.metrics.err:"));
    }

    @Test
    void roundTripThroughTheMechspecBlockKeepsEverything() {
        PaperRun r = run(1e-15, 100, true);
        r.propertyChecks.put("c", true);
        assertThat(ArtifactDiff.compare(MANIFEST, PaperRun.fromJson(r.toJson()), r)).isEmpty();
        assertThat(PaperRun.fromJson(r.toJson()).toJson()).isEqualTo(r.toJson());
    }

    @Test
    void runsOnDifferentCheckpointsAreNeverComparedAndKeepTheirOwnReferences() throws Exception {
        PaperRun fixture = run(1e-15, 100, true);
        PaperRun onCheckpoint = run(1e-15, 100, true);
        onCheckpoint.checkpoint.put("id", "Qwen/Qwen2.5-0.5B").put("revision", "r").putObject("files_sha256").put("config.json", "ab");
        PaperRun otherFiles = PaperRun.fromJson(onCheckpoint.toJson());
        ((ObjectNode) otherFiles.checkpoint.get("files_sha256")).put("config.json", "cd");
        // Identical figures, yet a different checkpoint is one finding and nothing else is compared.
        assertThat(ArtifactDiff.compare(MANIFEST, onCheckpoint, fixture)).singleElement().asString()
                .startsWith("mechspec.checkpoint:").contains("the paper's own fixture");
        assertThat(ArtifactDiff.compare(MANIFEST, otherFiles, onCheckpoint)).singleElement().asString().startsWith("mechspec.checkpoint:");
        assertThat(ArtifactDiff.compare(MANIFEST, PaperRun.fromJson(onCheckpoint.toJson()), onCheckpoint)).isEmpty();
        assertThat(fixture.referenceName()).isEqualTo("demo.cpu.json");
        assertThat(onCheckpoint.referenceName()).matches("checkpoints/qwen-qwen2\\.5-0\\.5b-[0-9a-f]{12}/demo\\.cpu\\.json");
        assertThat(otherFiles.referenceName()).isNotEqualTo(onCheckpoint.referenceName());
    }

    @Test
    void aRunRecordingTwoCheckpointsIsRefused() {
        PaperRun r = new PaperRun("demo", "cpu");
        ObjectNode entry = JSON.createObjectNode().put("seed", 42).put("check", "c");
        entry.putObject("checkpoint").put("id", "a");
        r.add(entry, true);
        entry.putObject("checkpoint").put("id", "b");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> r.add(entry, true)).hasMessageContaining("two checkpoints");
    }

    @Test
    void gpuValidatedOnlyForACudaRunWhoseChecksAllPassed() {
        Manifest m = ManifestLoader.parse("demo.json", """
                {"paper": "demo", "title": "t", "seeds": [42, 43], "dataset": {}, "protocol": {}, "claim_policy": {},
                 "limitations": [], "sources": [], "checks": [{"name": "c", "description": "d"}],
                 "metrics": [{"name": "err"}, {"name": "bytes"}], "artifact": {"g": "$gpu_validated"}}
                """);
        SourceFingerprints.Recorded none = new SourceFingerprints.Recorded("abc", java.util.Map.of());
        PaperRun cuda = new PaperRun("demo", "cuda");
        cuda.seeds.putAll(run(1e-15, 100, true).seeds);
        assertThat(new ArtifactRenderer(m, cuda, none).render().get("g").asBoolean()).isTrue();
        assertThat(new ArtifactRenderer(m, run(1e-15, 100, true), none).render().get("g").asBoolean()).as("cpu").isFalse();
        PaperRun emulated = new PaperRun("demo", "cuda-emulated");
        emulated.seeds.putAll(run(1e-15, 100, true).seeds);
        assertThat(new ArtifactRenderer(m, emulated, none).render().get("g").asBoolean()).as("the emulated driver").isFalse();
        cuda.seed(43).outcome("c", false);
        assertThat(new ArtifactRenderer(m, cuda, none).render().get("g").asBoolean()).as("a failed check").isFalse();
    }

    @Test
    void layoutCheckReportsMissingAndMistypedPathsButNotFreeKeys() throws Exception {
        JsonNode reference = JSON.readTree("{\"a\": {\"b\": 1, \"c\": [{\"d\": true}]}, \"files\": {\"x.py\": \"h\"}}");
        ObjectNode ours = (ObjectNode) JSON.readTree("{\"a\": {\"b\": 2.5, \"c\": [{\"d\": true}], \"extra\": 1}, \"files\": {\"y.java\": \"h\"}}");
        assertThat(LayoutCheck.compare(reference, ours, List.of("files"))).isEmpty();
        ((ObjectNode) ours.get("a")).put("b", "2.5");
        ((ObjectNode) ours.get("a").get("c").get(0)).remove("d");
        assertThat(LayoutCheck.compare(reference, ours, List.of("files")))
                .containsExactlyInAnyOrder("a.b: expected number, got string", "a.c[].d: missing (reference has boolean)");
        assertThat(LayoutCheck.compare(reference, ours, List.of())).contains("files.x.py: missing (reference has string)");
    }

    @Test
    void committedReportsContainTheirSeedFilesLayout() throws Exception {
        Path reports = Path.of("reports");
        for (Manifest m : ManifestLoader.loadAll(Path.of("contracts"))) {
            if (m.seedArtifact().isBlank()) {
                continue;
            }
            JsonNode seed = JSON.readTree(Files.readString(Path.of(m.seedArtifact())));
            Path ours = reports.resolve(m.paper() + ".cpu.json");
            assertThat(ours).as("committed reference artifact for " + m.paper()).exists();
            assertThat(LayoutCheck.compare(seed, JSON.readTree(Files.readString(ours)), m.freeKeys()))
                    .as("layout of " + ours + " against " + m.seedArtifact()).isEmpty();
        }
    }
}
