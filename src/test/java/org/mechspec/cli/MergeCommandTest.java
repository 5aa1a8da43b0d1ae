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

/**
 * {@code mechspec merge}: shards with disjoint seeds give exactly the artifact of one run over all seeds; anything
 * that cannot be joined honestly is refused with every reason, and no output (not even a partial one) appears.
 */
@Tag("cli")
class MergeCommandTest {
    @TempDir
    Path dir;
    Path contracts;
    Manifest manifest;
    Path out;

    @BeforeEach
    void setUp() {
        contracts = SyntheticManifests.write(dir.resolve("contracts"));
        manifest = ManifestLoader.load(contracts.resolve("demo.json"));
        out = dir.resolve("merged/demo.cpu.json");
    }

    Path shard(String name, PaperRun run, String commit) {
        return Artifacts.write(dir.resolve(name), Artifacts.render(manifest, run, commit));
    }

    Cli merge(Path... files) {
        String[] args = new String[files.length + 5];
        args[0] = "merge";
        args[1] = "--contracts";
        args[2] = contracts.toString();
        args[3] = "--out";
        args[4] = out.toString();
        for (int i = 0; i < files.length; i++) {
            args[i + 5] = files[i].toString();
        }
        return Cli.run(args);
    }

    @Test
    void disjointShardsGiveTheArtifactOfOneRunOverAllSeeds() throws Exception {
        Path a = shard("a.json", Artifacts.demoRun("cpu", 43), "c0ffee");
        Path b = shard("b.json", Artifacts.demoRun("cpu", 42, 44), "c0ffee");
        Cli r = merge(a, b);
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("merged 2 shards into " + out + ": demo.cpu, seeds [42, 43, 44]");
        ObjectNode full = Artifacts.render(manifest, Artifacts.demoRun("cpu", 42, 43, 44), "c0ffee");
        // Byte for byte what one run over all seeds writes.
        assertThat(Files.readString(out)).isEqualTo(Files.readString(Artifacts.write(dir.resolve("full.json"), full)));
        // Aggregates and the negative result now cover all three seeds.
        assertThat(full.at("/metrics/err/n").asInt()).isEqualTo(3);
        assertThat(full.get("negative_result").asText()).startsWith("Seed 43:");
        assertThat(Cli.run("validate", "--contracts", contracts.toString(), out.toString()).code()).isZero();
        assertThat(Artifacts.names(out.getParent())).containsExactly("demo.cpu.json");
    }

    @Test
    void failedChecksAreCarriedIntoTheMergedArtifactWithANote() {
        PaperRun failing = Artifacts.demoRun("cpu", 43);
        failing.seed(43).outcome("counted", false);
        Cli r = merge(shard("a.json", Artifacts.demoRun("cpu", 42), "c0ffee"), shard("b.json", failing, "c0ffee"));
        assertThat(r.code()).as(r.toString()).isZero();
        assertThat(r.out()).contains("note: " + dir.resolve("b.json") + ": mechspec.seeds.43.checks.counted: check failed on seed 43");
        assertThat(Artifacts.read(out).at("/per_seed/1/checks/counted").asBoolean()).isFalse();
    }

    @Test
    void overlappingSeedsAreRefused() {
        Path a = shard("a.json", Artifacts.demoRun("cpu", 42, 43), "c0ffee");
        Path b = shard("b.json", Artifacts.demoRun("cpu", 43, 44), "c0ffee");
        assertRefused(merge(a, b), b + ": seeds [43] are also in " + a + " (shards must hold disjoint seeds)");
    }

    @Test
    void differentCommitsAreRefused() {
        Path a = shard("a.json", Artifacts.demoRun("cpu", 42), "c0ffee");
        Path b = shard("b.json", Artifacts.demoRun("cpu", 43), "decade");
        assertRefused(merge(a, b), b + ": commit (mechspec.commit) is 'decade', but " + a + " has 'c0ffee'");
    }

    @Test
    void differentManifestsAreRefused() {
        Path a = shard("a.json", Artifacts.demoRun("cpu", 42), "c0ffee");
        Manifest edited = ManifestLoader.parse("demo.json", SyntheticManifests.DEMO.replace("Three seeds are few.", "Few seeds."));
        Path b = Artifacts.write(dir.resolve("b.json"), Artifacts.render(edited, Artifacts.demoRun("cpu", 43), "c0ffee"));
        assertRefused(merge(a, b), b + ": manifest (mechspec.manifest_sha256) is '");
        assertThat(merge(a, b).out()).contains(b + ": mechspec.manifest_sha256: made with another version of");
    }

    @Test
    void differentBackendsAreRefused() {
        Path a = shard("a.json", Artifacts.demoRun("cpu", 42), "c0ffee");
        Path b = shard("b.json", Artifacts.demoRun("cuda", 43), "c0ffee");
        assertRefused(merge(a, b), b + ": backend is 'cuda', but " + a + " has 'cpu'");
    }

    @Test
    void differentPapersAreRefused() throws Exception {
        Path a = shard("a.json", Artifacts.demoRun("cpu", 42), "c0ffee");
        Files.writeString(contracts.resolve("demo2.json"), SyntheticManifests.DEMO.replace("\"paper\": \"demo\"", "\"paper\": \"demo2\"")
                .replace("\"method\": \"demo\"", "\"method\": \"demo2\""));
        PaperRun other = Artifacts.demoRun("cpu", 43);
        PaperRun renamed = new PaperRun("demo2", "cpu");
        renamed.seeds.putAll(other.seeds);
        renamed.device = other.device;
        Path b = Artifacts.write(dir.resolve("b.json"), Artifacts.render(ManifestLoader.load(contracts.resolve("demo2.json")), renamed, "c0ffee"));
        assertRefused(merge(a, b), b + ": paper is 'demo2', but " + a + " has 'demo'");
    }

    @Test
    void inconsistentAggregateInAShardIsRefused() {
        Path a = shard("a.json", Artifacts.demoRun("cpu", 42), "c0ffee");
        Path b = Artifacts.edit(shard("b0.json", Artifacts.demoRun("cpu", 43, 44), "c0ffee"), dir.resolve("b.json"),
                json -> ((ObjectNode) json.at("/metrics/err")).put("mean", 1.0));
        assertRefused(merge(a, b), b + ": metrics.err.mean: 1.0, but rendering the mechspec block gives 4.35");
    }

    @Test
    void seedFilesWithoutMechspecBlockAreRefused() {
        Path seed = Path.of(SyntheticManifests.FOLD_BIAS_SEED);
        Path a = shard("a.json", Artifacts.demoRun("cpu", 42), "c0ffee");
        assertRefused(merge(a, seed), seed + ": no mechspec block: only artifacts written by mechspec can be merged");
    }

    @Test
    void refusalLeavesAnExistingOutputUntouched() throws Exception {
        Files.createDirectories(out.getParent());
        Files.writeString(out, "previous");
        Path a = shard("a.json", Artifacts.demoRun("cpu", 42), "c0ffee");
        assertRefused(merge(a, a), a + ": seeds [42] are also in " + a);
        assertThat(Files.readString(out)).isEqualTo("previous");
        assertThat(Artifacts.names(out.getParent())).containsExactly("demo.cpu.json");
    }

    @Test
    void unreadableShardsExitTwoWithoutOutput() throws Exception {
        Path a = shard("a.json", Artifacts.demoRun("cpu", 42), "c0ffee");
        Cli missing = merge(a, dir.resolve("gone.json"));
        assertThat(missing.code()).isEqualTo(2);
        assertThat(missing.err().strip()).isEqualTo("mechspec: " + dir.resolve("gone.json") + ": no such file");
        Path broken = Files.writeString(dir.resolve("broken.json"), "{\"mechspec\": ");
        Cli invalid = merge(a, broken);
        assertThat(invalid.code()).isEqualTo(2);
        assertThat(invalid.err()).startsWith("mechspec: " + broken + ": invalid JSON").hasLineCount(1);
        Path stranger = Files.writeString(dir.resolve("stranger.json"), "{\"mechspec\": {\"paper\": \"nobody\"}}");
        Cli unknown = merge(a, stranger);
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains(stranger + ": unknown paper");
        assertThat(Files.exists(out.getParent())).isFalse();
    }

    @Test
    void unwritableOutExitsTwoWithOneLineNamingThePath() throws Exception {
        // Tests run as root, where a read-only folder is still writable: a regular file where the folder must be is not.
        Path file = Files.writeString(dir.resolve("not-a-folder"), "keep");
        out = file.resolve("demo.cpu.json");
        Path a = shard("a.json", Artifacts.demoRun("cpu", 43), "c0ffee");
        Path b = shard("b.json", Artifacts.demoRun("cpu", 42), "c0ffee");
        Cli r = merge(a, b);
        assertThat(r.code()).as(r.toString()).isEqualTo(2);
        assertThat(r.err().strip()).isEqualTo("mechspec: cannot write " + out + ": " + file + " is not a folder");
        assertThat(r.err()).doesNotContain("Exception").hasLineCount(1);
        assertThat(Files.readString(file)).isEqualTo("keep");
        assertThat(Artifacts.names(dir)).doesNotContain("demo.cpu.json");
    }

    @Test
    void aReadOnlyFolderIsNamedAsPermissionDenied() {
        Path target = dir.resolve("ro/demo.cpu.json");
        assertThat(InputException.cannotWrite(target, new java.nio.file.AccessDeniedException(dir.resolve("ro/.demo.cpu.json1.tmp").toString())))
                .hasMessage("cannot write " + target + ": permission denied");
        assertThat(InputException.cannotWrite(target, new java.nio.file.FileSystemException(target.toString(), null, "Read-only file system")))
                .hasMessage("cannot write " + target + ": read-only file system");
    }

    @Test
    void outIsRequiredAndOneShardIsNotAMerge() {
        Path a = shard("a.json", Artifacts.demoRun("cpu", 42), "c0ffee");
        Cli noOut = Cli.run("merge", a.toString(), a.toString());
        assertThat(noOut.code()).isEqualTo(2);
        assertThat(noOut.err()).contains("Missing required option: '--out=FILE'");
        Cli one = Cli.run("merge", "--out", out.toString(), a.toString());
        assertThat(one.code()).isEqualTo(2);
    }

    private void assertRefused(Cli r, String expectedLine) {
        assertThat(r.code()).as(r.toString()).isEqualTo(1);
        assertThat(r.out()).as(r.toString()).contains(expectedLine).contains("merge refused: ");
        assertThat(r.out().strip().lines().reduce((x, y) -> y).orElse("")).endsWith(out + " not written");
        if (Files.exists(out.getParent())) {
            assertThat(Artifacts.names(out.getParent())).allMatch(n -> n.equals("demo.cpu.json"));
        }
        if (!Files.exists(out)) {
            assertThat(Files.exists(out.getParent())).isFalse();
        }
    }
}
