package org.mechspec.oal;

import java.nio.file.Files;
import java.nio.file.Path;
import org.mechspec.model.Qwen2Model;
import org.opentest4j.TestAbortedException;

/**
 * The project's trained small Qwen2 model, {@code fixtures/checkpoints/tiny-qwen2} under
 * {@code -Dmechspec.fixtures.dir} (default {@code fixtures}).
 */
final class OalFixture {
    static final String CHECKPOINT = "checkpoints/tiny-qwen2";

    private OalFixture() {
    }

    static Path dir() {
        return Path.of(System.getProperty("mechspec.fixtures.dir", "fixtures")).resolve(CHECKPOINT);
    }

    static Qwen2Model load() {
        Path dir = dir();
        if (!Files.isRegularFile(dir.resolve("config.json"))) {
            throw new TestAbortedException(dir + " is missing: the OAL protocol runs on the project's trained fixture");
        }
        throw new IllegalStateException("checkpoint loading is not wired yet");
    }
}
