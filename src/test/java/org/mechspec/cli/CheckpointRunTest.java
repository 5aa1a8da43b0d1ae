package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.data.DataFiles;
import org.mechspec.model.CheckpointHashes;
import org.mechspec.model.RandomQwenCheckpoint;
import org.mechspec.report.PaperRun;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;
import org.mechspec.tokenize.BpeTokenizer;

/**
 * {@code mechspec run --paper oal --checkpoint DIR} on a random-weight folder laid out as Hugging Face ships
 * Qwen2.5-0.5B (its config keys, bf16 safetensors, q/k/v biases, tied embeddings, the real vocabulary; 5 layers of
 * head dim 64): the whole BPE protocol runs on Qwen's tokens, every OAL check runs, and the artifact follows the seed's
 * layout and names the checkpoint it ran on.
 *
 * <p>Random weights of order one are not Qwen's: on seeds 43 and 44 the fp32 recurrent and dense forms differ by
 * 1.2e-5, above the seed's absolute 1e-5 (Qwen2.5-0.5B itself gave 1.2e-6 in seed file 004), and the check says so.
 * The run is seed 43's alone (each seed is one pass of the protocol, a minute of CPU here), so the failed verdict's
 * path is shown too; that outcome is pinned with every other (same seed, same bits), so a change to any of them is seen.
 */
@Tag("cli")
@org.junit.jupiter.api.extension.ExtendWith(org.mechspec.spec.MissingDataSkips.class)
class CheckpointRunTest {
    @TempDir
    Path dir;

    @Test
    void theOalCheckpointProtocolRunsEndToEndOnAGeneratedQwenFolder() throws Exception {
        org.assertj.core.api.Assumptions.assumeThat(System.getProperty("mechspec.backend", "auto"))
                .as("it runs on the CPU whatever the build's backend, so once, in the CPU build").isNotEqualTo("cuda-emulated");
        Path data = DataFiles.dataDir();
        BpeTokenizer.qwenFile(); // absent: the data layer's skip (a full run's named failure), as wherever it is read
        Path checkpoint = RandomQwenCheckpoint.write(dir.resolve("qwen-random"), RandomQwenCheckpoint.OAL_PROTOCOL, 414);
        Path out = dir.resolve("out");
        // A JVM of its own, as a user runs it: the nested run's properties and Allure results stay out of this build.
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx2g", "-Djava.io.tmpdir=" + Files.createDirectories(dir.resolve("tmp")),
                "-cp", System.getProperty("java.class.path"), Main.class.getName(), "run", "--paper", "oal",
                "--backend", "cpu", "--seeds", "43", "--quiet", "--checkpoint", checkpoint.toString(), "--data-dir", data.toString(),
                "--out", out.toString()));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(10, TimeUnit.MINUTES)).isTrue();
        assertThat(p.exitValue()).as(log).isEqualTo(ExitCodes.FINDINGS);
        assertThat(log).containsPattern("contracts: [1-9][0-9]* passed, 1 failed");

        JsonNode artifact = new ObjectMapper().readTree(out.resolve("reports/oal.cpu.json").toFile());
        JsonNode named = artifact.path("mechspec").path("checkpoint");
        assertThat(named.path("id").asText()).isEqualTo("unpinned");
        assertThat(new ObjectMapper().convertValue(named.path("files_sha256"),
                new com.fasterxml.jackson.core.type.TypeReference<java.util.Map<String, String>>() { }))
                .isEqualTo(CheckpointHashes.ofLoadedFiles(checkpoint));
        assertThat(artifact.path("checkpoint")).isEqualTo(named);
        assertThat(artifact.path("protocol").path("id").asText()).isEqualTo("oal-qwen2.5-base-wikitext2-v1-bpe-block-v1");
        assertThat(artifact.path("mechspec").path("seeds").path("43").path("datasets").path(BpeTokenizer.QWEN_FILE).asText())
                .isEqualTo(BpeTokenizer.QWEN_SHA256);
        assertThat(artifact.path("per_seed")).hasSize(1);
        PaperRun run = PaperRun.fromJson(artifact.path("mechspec"));
        // The reference of this checkpoint lives apart from the fixture's: a checkpoint run never replaces it.
        assertThat(run.referenceName()).startsWith("checkpoints/unpinned-").endsWith("/oal.cpu.json");
        Manifest manifest = ManifestLoader.forCheckpoint(ManifestLoader.base("oal"));
        assertThat(run.seeds.keySet()).containsExactly(43L);
        for (String check : manifest.checks().keySet()) {
            if (check.startsWith("oal_dense_cuda") || check.startsWith("oal_recurrent_cuda")) {
                continue; // the CUDA kernels' contracts; this run is on the CPU
            }
            assertThat(run.checkOutcome(43, check)).as(check).isEqualTo(!check.equals("recurrent_dense_equivalence"));
        }
        double fp32 = ((Number) run.seeds.get(43L).metrics.get("recurrent_dense_max_error")).doubleValue();
        assertThat(fp32).isGreaterThan(manifest.check("recurrent_dense_equivalence").threshold());
        // Valid apart from the failed verdict, which the validator names as findings.
        assertThat(ArtifactValidator.validate(ManifestLoader.base("oal"), artifact)).isNotEmpty()
                .allSatisfy(f -> assertThat(f.failedCheck() && f.path().contains("recurrent_dense")).as("%s", f).isTrue());
    }
}
