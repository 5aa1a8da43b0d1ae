package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.data.DataFiles;

/** Pinned SHA-256 of a checkpoint folder's files are checked, each failure naming the file, before any loading. */
@Tag("model")
class CheckpointHashesTest {
    @TempDir
    Path dir;

    /** A generated Qwen2.5-style folder plus a tokenizer file, and the hashes of its three files. */
    private Map<String, String> folderAndItsHashes() throws IOException {
        RandomQwenCheckpoint.write(dir, RandomQwenCheckpoint.TINY, 150);
        Files.writeString(dir.resolve("tokenizer.json"), "{\"version\": \"1.0\"}\n");
        return CheckpointHashes.of(dir, List.of("model.safetensors", "config.json", "tokenizer.json"));
    }

    @Test
    void hashesAreTheFilesSha256SortedByName() throws IOException {
        Map<String, String> hashes = folderAndItsHashes();
        assertThat(hashes.keySet()).containsExactly("config.json", "model.safetensors", "tokenizer.json");
        for (Map.Entry<String, String> e : hashes.entrySet()) {
            assertThat(e.getValue()).isEqualTo(DataFiles.sha256(Files.readAllBytes(dir.resolve(e.getKey()))));
        }
        assertThat(CheckpointHashes.require(dir, hashes)).isEqualTo(hashes);
        Map<String, String> upper = new LinkedHashMap<>();
        hashes.forEach((name, hash) -> upper.put(name, hash.toUpperCase()));
        assertThat(CheckpointHashes.require(dir, upper)).isEqualTo(hashes);
    }

    @Test
    void aMismatchNamesTheFileAndBothHashesBeforeAnythingIsLoaded() throws IOException {
        Map<String, String> pinned = folderAndItsHashes();
        // Not even a safetensors file any more: the hash check must fail first, without parsing it.
        Path weights = dir.resolve("model.safetensors");
        Files.writeString(weights, "not the pinned weights");
        String actual = DataFiles.sha256("not the pinned weights".getBytes(StandardCharsets.UTF_8));
        assertThatThrownBy(() -> CheckpointHashes.require(dir, pinned))
                .isInstanceOf(DataFiles.DataIntegrityException.class)
                .hasMessage(weights + " has SHA-256 " + actual + ", expected " + pinned.get("model.safetensors")
                        + ": not the pinned checkpoint file");
    }

    @Test
    void anAbsentFileIsNamedBeforeAnyFileIsHashed() throws IOException {
        Map<String, String> pinned = new LinkedHashMap<>(folderAndItsHashes());
        Files.writeString(dir.resolve("config.json"), "{}"); // a mismatch, but reading it is not needed to fail
        pinned.put("merges.txt", "0".repeat(64));
        assertThatThrownBy(() -> CheckpointHashes.require(dir, pinned))
                .isInstanceOf(DataFiles.MissingDataException.class)
                .hasMessageStartingWith(dir.resolve("merges.txt") + " is absent");
    }

    @Test
    void malformedPinsAreRefused() throws IOException {
        folderAndItsHashes();
        assertThatThrownBy(() -> CheckpointHashes.require(dir, Map.of("config.json", "abc123")))
                .hasMessageContaining("pinned SHA-256 of 'config.json' is not 64 hex digits");
        assertThatThrownBy(() -> CheckpointHashes.require(dir, Map.of("../config.json", "0".repeat(64))))
                .hasMessageContaining("'../config.json' is not inside");
    }
}
