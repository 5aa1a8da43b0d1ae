package org.mechspec.oal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.mechspec.data.DataFiles;
import org.mechspec.model.Checkpoint;
import org.mechspec.model.Precision;
import org.mechspec.model.Qwen2Model;
import org.mechspec.spec.Manifest;
import org.opentest4j.TestAbortedException;

/**
 * The project's trained small Qwen2 model, {@code checkpoints/tiny-qwen2} under {@code -Dmechspec.fixtures.dir}
 * (default {@code fixtures}). Its files must have the SHA-256 the manifest pins (checkpoint.files_sha256), and the
 * model must have the layer the protocol converts.
 */
final class OalFixture {
    private OalFixture() {
    }

    static Path dir() {
        return Checkpoint.tinyQwen2();
    }

    /** The fixture, verified against the manifest's pinned hashes; skips with a message when it is absent. */
    static Qwen2Model load(Manifest manifest) {
        Path dir = dir();
        if (!Files.isRegularFile(dir.resolve(Checkpoint.CONFIG_FILE))) {
            throw new TestAbortedException(dir + " is missing: the OAL protocol runs on the project's trained fixture"
                    + " (see README: org.mechspec.model.Pretrain writes it)");
        }
        return load(dir, pinnedHashes(manifest));
    }

    /** Loads {@code dir} after checking each named file's SHA-256; rejects a model without the converted layer. */
    static Qwen2Model load(Path dir, Map<String, String> sha256) {
        sha256.forEach((file, want) -> {
            String have;
            try {
                have = DataFiles.sha256(Files.readAllBytes(dir.resolve(file)));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot read checkpoint file " + dir.resolve(file), e);
            }
            if (!have.equals(want)) {
                throw new IllegalStateException("checkpoint file " + dir.resolve(file) + " has SHA-256 " + have
                        + " but contracts/oal.json pins " + want + ": the fixture changed; re-pin it deliberately");
            }
        });
        Qwen2Model model = Checkpoint.load(dir, Precision.FP32);
        OalProtocol.requireConvertible(model);
        return model;
    }

    static Map<String, String> pinnedHashes(Manifest manifest) {
        Map<String, String> out = new LinkedHashMap<>();
        manifest.root().path("checkpoint").path("files_sha256").fields()
                .forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        if (out.isEmpty()) {
            throw new IllegalStateException(manifest.file() + ": checkpoint.files_sha256 pins no fixture file");
        }
        return out;
    }
}
