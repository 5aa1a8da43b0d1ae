package org.mechspec.oal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;

/** The fixture hashes the OAL manifest pins (checkpoint.files_sha256), and a manifest that pins none. */
@Tag("oal")
class OalFixtureHashesTest {

    private static final Manifest OAL = ManifestLoader.base("oal");

    /** The OAL manifest with its checkpoint node edited by {@code edit}. */
    private static Manifest withCheckpoint(Consumer<ObjectNode> edit) {
        JsonNode root = OAL.root().deepCopy();
        edit.accept((ObjectNode) root.path("checkpoint"));
        return new Manifest("edited-oal.json", OAL.paper(), OAL.arxivId(), OAL.title(), OAL.seeds(), OAL.checks(),
                OAL.metrics(), OAL.hypotheses(), OAL.hypothesisCaveat(), OAL.sources(), OAL.seedArtifact(),
                OAL.freeKeys(), OAL.artifact(), root);
    }

    /** Catches pinnedHashes handing back an empty map: every pinned file and its hash, in the manifest's order. */
    @Test
    void pinnedHashesAreTheManifestsFilesInOrder() {
        JsonNode pinned = OAL.root().path("checkpoint").path("files_sha256");
        List<String> names = new ArrayList<>();
        pinned.fieldNames().forEachRemaining(names::add);
        assertThat(names).containsExactly("config.json", "model.safetensors", "training.json");

        Map<String, String> got = OalFixture.pinnedHashes(OAL);
        assertThat(got.keySet()).containsExactlyElementsOf(names);
        for (String name : names) {
            assertThat(got.get(name)).as(name).isEqualTo(pinned.path(name).asText()).hasSize(64);
        }
    }

    /**
     * The committed fixture is what the manifest pins, and so is the revision line that quotes training.json's hash
     * (training-log.json, the run's wall times, is not pinned: rerunning Pretrain rewrites only that one).
     */
    @Test
    void committedFixtureFilesHaveThePinnedHashes() throws Exception {
        java.nio.file.Path dir = OalFixture.dir();
        Map<String, String> pinned = OalFixture.pinnedHashes(OAL);
        for (Map.Entry<String, String> e : pinned.entrySet()) {
            assertThat(org.mechspec.data.DataFiles.sha256(java.nio.file.Files.readAllBytes(dir.resolve(e.getKey())))).as(e.getKey())
                    .isEqualTo(e.getValue());
        }
        assertThat(pinned).doesNotContainKey("training-log.json");
        assertThat(OAL.root().path("checkpoint").path("revision").asText()).endsWith("training.json sha256 " + pinned.get("training.json"));
    }

    /** Catches a manifest that pins no file passing as "nothing to verify": an empty files_sha256 is an error. */
    @Test
    void emptyFilesSha256IsRejected() {
        Manifest empty = withCheckpoint(c -> c.putObject("files_sha256"));
        assertThatThrownBy(() -> OalFixture.pinnedHashes(empty)).isInstanceOf(IllegalStateException.class)
                .hasMessage("edited-oal.json: checkpoint.files_sha256 pins no fixture file");
    }

    /** Catches a manifest without files_sha256 loading an unverified fixture: the missing field is the same error. */
    @Test
    void missingFilesSha256IsRejected() {
        Manifest missing = withCheckpoint(c -> c.remove("files_sha256"));
        assertThat(missing.root().path("checkpoint").has("files_sha256")).isFalse();
        assertThatThrownBy(() -> OalFixture.pinnedHashes(missing)).isInstanceOf(IllegalStateException.class)
                .hasMessage("edited-oal.json: checkpoint.files_sha256 pins no fixture file");
    }
}
