package org.mechspec.oal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.mechspec.data.DataFiles;
import org.mechspec.data.TokenBlocks;
import org.mechspec.data.WikiText2;
import org.mechspec.model.Checkpoint;
import org.mechspec.model.CheckpointHashes;
import org.mechspec.model.Precision;
import org.mechspec.model.Qwen2Model;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;
import org.mechspec.tokenize.BpeTokenizer;

/**
 * What one launch's OAL protocol runs on: the project's byte-level fixture over byte blocks, or, with
 * {@code -Dmechspec.checkpoint=DIR}, a Hugging Face checkpoint folder over blocks of Qwen's BPE tokens (the manifest's
 * {@code checkpoint_protocol}, seed 004's setting). Both cut WikiText-2's validation and test splits into consecutive
 * {@value OalProtocol#SEQUENCE_LENGTH}-token blocks.
 *
 * @param checkpoint the checkpoint folder's record for the artifact; null for the fixture
 * @param datasets every data file read (name → SHA-256), for the run's records
 */
record OalSetting(Qwen2Model model, TokenBlocks validation, TokenBlocks test, CheckpointRecord checkpoint,
                  Map<String, String> datasets) {

    /** The checkpoint as the artifact names it: id, revision and the SHA-256 of every file the model was read from. */
    record CheckpointRecord(String id, String revision, Map<String, String> filesSha256) {
    }

    /** The setting this JVM selects: the checkpoint of {@code -Dmechspec.checkpoint}, else the fixture. */
    static OalSetting selected(Manifest manifest) {
        return ManifestLoader.checkpoint().map(dir -> checkpoint(dir, manifest)).orElseGet(() -> fixture(manifest));
    }

    static OalSetting fixture(Manifest manifest) {
        Map<String, String> datasets = splits();
        return new OalSetting(OalFixture.load(manifest),
                TokenBlocks.ofBytes(WikiText2.VALIDATION.bytes(), OalProtocol.SEQUENCE_LENGTH),
                TokenBlocks.ofBytes(WikiText2.TEST.bytes(), OalProtocol.SEQUENCE_LENGTH), null, datasets);
    }

    /**
     * A checkpoint folder on BPE blocks. A folder whose config.json is the pinned checkpoint's (the manifest's
     * {@code checkpoint.id}, Qwen/Qwen2.5-0.5B) must hold every pinned file with its pinned SHA-256, checked before
     * anything is loaded; any other folder runs as {@code unpinned}, its files' hashes recorded.
     */
    static OalSetting checkpoint(Path dir, Manifest manifest) {
        if (!Files.isRegularFile(dir.resolve(Checkpoint.CONFIG_FILE))) {
            throw new IllegalArgumentException("-D" + ManifestLoader.CHECKPOINT_PROPERTY + "=" + dir
                    + " is not a checkpoint folder: it has no " + Checkpoint.CONFIG_FILE);
        }
        Map<String, String> pinned = OalFixture.pinnedHashes(manifest);
        String id = manifest.root().path("checkpoint").path("id").asText();
        String revision = manifest.root().path("checkpoint").path("revision").asText();
        boolean isPinned = CheckpointHashes.sha256(dir.resolve(Checkpoint.CONFIG_FILE)).equals(pinned.get(Checkpoint.CONFIG_FILE));
        if (isPinned) {
            try {
                CheckpointHashes.require(dir, pinned);
            } catch (DataFiles.MissingDataException e) {
                // Asked for by name: a failure, not a skip (no cause, as a MissingDataException cause would skip).
                throw new IllegalStateException(dir + " has " + id + "'s config.json, but " + e.getMessage());
            }
        }
        Map<String, String> read = CheckpointHashes.ofLoadedFiles(dir);
        Qwen2Model model = Checkpoint.load(dir, Precision.FP32);
        OalProtocol.requireConvertible(model);
        CheckpointRecord record = isPinned ? new CheckpointRecord(id, revision, read)
                : new CheckpointRecord("unpinned", "a local folder whose config.json is not " + id + "'s: no file is pinned", read);
        Map<String, String> datasets = splits();
        try (BpeTokenizer tokenizer = BpeTokenizer.qwen()) {
            datasets.put(BpeTokenizer.QWEN_FILE, tokenizer.sha256());
            int vocab = model.config().vocabSize();
            return new OalSetting(model, fitting(OalProtocol.bpeBlocks(tokenizer, WikiText2.VALIDATION.bytes()), vocab, dir),
                    fitting(OalProtocol.bpeBlocks(tokenizer, WikiText2.TEST.bytes()), vocab, dir),
                    record, datasets);
        }
    }

    /** The blocks, refused when a token id is outside the checkpoint's vocabulary (another tokenizer's model). */
    private static TokenBlocks fitting(TokenBlocks blocks, int vocab, Path dir) {
        int[] all = blocks.blocks(java.util.stream.IntStream.range(0, blocks.count()).toArray());
        int max = java.util.Arrays.stream(all).max().orElse(0);
        if (max >= vocab) {
            throw new IllegalArgumentException(dir + " has a vocabulary of " + vocab + " tokens, but Qwen's BPE gives token id "
                    + max + ": the checkpoint was not trained with this tokenizer");
        }
        return blocks;
    }

    private static Map<String, String> splits() {
        Map<String, String> out = new LinkedHashMap<>();
        out.put(WikiText2.VALIDATION.relativePath(), WikiText2.VALIDATION.sha256());
        out.put(WikiText2.TEST.relativePath(), WikiText2.TEST.sha256());
        return out;
    }
}
