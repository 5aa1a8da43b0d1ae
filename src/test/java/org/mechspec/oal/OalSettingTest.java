package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.data.DataFiles.DataIntegrityException;
import org.mechspec.data.WikiText2;
import org.mechspec.model.CheckpointHashes;
import org.mechspec.model.RandomQwenCheckpoint;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;
import org.mechspec.tokenize.BpeTokenizer;

/**
 * The checkpoint setting of OAL ({@code -Dmechspec.checkpoint}): a folder with Qwen2.5-0.5B's config.json must hold
 * every file seed 004 pins, with its hash, before anything loads; any other folder runs unpinned, recording what it
 * read; the blocks are Qwen BPE tokens of the splits.
 */
@Tag("oal")
class OalSettingTest {
    private static final Manifest BPE = ManifestLoader.forCheckpoint(ManifestLoader.base("oal"));

    @TempDir
    Path dir;

    @Test
    void theBpeProtocolPinsSeed004sCheckpointFiles() throws IOException {
        JsonNode seed = new ObjectMapper().readTree(Path.of(BPE.seedArtifact()).toFile()).path("checkpoint");
        Map<String, String> seedFiles = new java.util.TreeMap<>();
        seed.path("files_sha256").fields().forEachRemaining(e -> seedFiles.put(e.getKey(), e.getValue().asText()));
        assertThat(seedFiles).hasSize(7);
        assertThat(OalFixture.pinnedHashes(BPE)).as("seed 004's files, none of the fixture's").isEqualTo(seedFiles);
        assertThat(BPE.root().path("checkpoint").path("id").asText()).isEqualTo(seed.path("id").asText()).isEqualTo("Qwen/Qwen2.5-0.5B");
        assertThat(BPE.root().path("checkpoint").path("revision").asText()).isEqualTo(seed.path("revision").asText());
        assertThat(BPE.checks()).isEqualTo(ManifestLoader.base("oal").checks());
    }

    @Test
    void aFolderWithQwensConfigButAnotherFileIsRefusedNamingTheFileBeforeLoading() throws IOException {
        writeRealConfig(dir);
        for (String name : OalFixture.pinnedHashes(BPE).keySet()) {
            if (!name.equals("config.json")) {
                Files.writeString(dir.resolve(name), "not " + name);
            }
        }
        assertThatThrownBy(() -> OalSetting.checkpoint(dir, BPE)).isInstanceOf(DataIntegrityException.class)
                .hasMessageContaining(dir.resolve("generation_config.json").toString()).hasMessageContaining("expected 8c970692");
        Files.delete(dir.resolve("merges.txt"));
        assertThatThrownBy(() -> OalSetting.checkpoint(dir, BPE)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Qwen/Qwen2.5-0.5B's config.json").hasMessageContaining("merges.txt is absent")
                .as("no MissingDataException cause, which would turn the failure into a skip").hasNoCause();
    }

    @Test
    void aFolderWithoutConfigIsNotACheckpoint() {
        assertThatThrownBy(() -> OalSetting.checkpoint(dir, BPE)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a checkpoint folder");
    }

    @Test
    void anyOtherFolderRunsUnpinnedOnQwenBpeBlocksOfTheSplits() throws IOException {
        Path folder = RandomQwenCheckpoint.write(dir.resolve("generated"), RandomQwenCheckpoint.OAL_PROTOCOL, 9);
        OalSetting s = OalSetting.checkpoint(folder, BPE);
        assertThat(s.checkpoint().id()).isEqualTo("unpinned");
        assertThat(s.checkpoint().filesSha256()).isEqualTo(CheckpointHashes.ofLoadedFiles(folder))
                .containsOnlyKeys("config.json", "model.safetensors");
        assertThat(s.datasets()).containsEntry(BpeTokenizer.QWEN_FILE, BpeTokenizer.QWEN_SHA256)
                .containsEntry(WikiText2.TEST.relativePath(), WikiText2.TEST.sha256());
        assertThat(s.model().config().headDim()).isEqualTo(64);
        try (BpeTokenizer tokenizer = BpeTokenizer.qwen()) {
            int[] ids = tokenizer.encodeIds(new String(WikiText2.TEST.bytes(), java.nio.charset.StandardCharsets.UTF_8));
            assertThat(s.test().count()).isEqualTo(ids.length / OalProtocol.SEQUENCE_LENGTH);
            assertThat(s.test().block(7)).isEqualTo(java.util.Arrays.copyOfRange(ids, 7 * 32, 8 * 32));
        }
        // BPE blocks are fewer than byte blocks: about four bytes per token.
        assertThat(s.validation().count()).isLessThan(WikiText2.VALIDATION.bytes().length / 32 / 3);
    }

    @Test
    void aCheckpointWhoseVocabularyIsNotQwensIsRefusedByName() throws IOException {
        Path folder = RandomQwenCheckpoint.write(dir.resolve("small-vocab"),
                new RandomQwenCheckpoint.Dims(5, 128, 2, 1, 256, 1000), 10);
        assertThatThrownBy(() -> OalSetting.checkpoint(folder, BPE)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("vocabulary of 1000 tokens").hasMessageContaining("not trained with this tokenizer");
    }

    private static void writeRealConfig(Path dir) throws IOException {
        try (InputStream in = RandomQwenCheckpoint.class.getResourceAsStream("qwen2.5-0.5b/config.json")) {
            Files.write(dir.resolve("config.json"), in.readAllBytes());
        }
        assertThat(CheckpointHashes.of(dir, java.util.List.of("config.json")))
                .isEqualTo(Map.of("config.json", OalFixture.pinnedHashes(BPE).get("config.json")));
    }
}
