package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;
import static org.mechspec.pnmix.DecodeIssueModel.FIXTURE;
import static org.mechspec.pnmix.DecodeIssueModel.REGENERATE;
import static org.mechspec.pnmix.DecodeIssueModel.fixture;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The SASS fixture the decode model reads ({@code fixtures/sass/pnmix_decode.sm_90.json}, written by
 * {@code src/main/cuda/sass-counts.py}) is the kernel's: counted from the sources it compiles from now (pnmix_decode.cu
 * and every file of its folder it includes, each one's SHA-256 recorded), and the model's constants are the kernel's
 * defines. Any edit to the kernel fails here with the command that regenerates the fixture.
 */
@Tag("pn-mix")
class SassFixtureTest {
    static final Path KERNEL = Path.of("src/main/cuda/pnmix_decode.cu");

    /** The kernel's source and every file of its folder it includes, recursively (what its SASS is compiled from). */
    static Map<String, byte[]> kernelSources() throws IOException {
        Map<String, byte[]> out = new LinkedHashMap<>();
        addWithIncludes(KERNEL, out);
        return out;
    }

    private static void addWithIncludes(Path file, Map<String, byte[]> out) throws IOException {
        String name = file.toString().replace('\\', '/');
        if (out.containsKey(name)) {
            return;
        }
        byte[] bytes = Files.readAllBytes(file);
        out.put(name, bytes);
        Matcher m = Pattern.compile("#include \"([^\"]+)\"").matcher(new String(bytes, StandardCharsets.UTF_8));
        while (m.find()) {
            addWithIncludes(file.resolveSibling(m.group(1)), out);
        }
    }

    /**
     * Null when the fixture was made from these sources (the kernel and its includes: each one's SHA-256 recorded, and
     * no other file); else the one-line reason and the command.
     */
    static String staleness(JsonNode fixture, Map<String, byte[]> sources) throws NoSuchAlgorithmException {
        JsonNode recorded = fixture.path("sources_sha256");
        for (Map.Entry<String, byte[]> e : sources.entrySet()) {
            String actual = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(e.getValue()));
            String was = recorded.path(e.getKey()).asText("none");
            if (!actual.equals(was)) {
                return FIXTURE + " was counted from another " + e.getKey() + " (SHA-256 " + was + ", now " + actual
                        + "): regenerate it with " + REGENERATE;
            }
        }
        if (recorded.size() != sources.size()) {
            return FIXTURE + " was counted from " + recorded.size() + " source files, " + KERNEL + " now compiles from "
                    + sources.size() + " (" + String.join(", ", sources.keySet()) + "): regenerate it with " + REGENERATE;
        }
        return null;
    }

    @Test
    void theFixtureIsTheKernelsSass() throws Exception {
        String stale = staleness(fixture(), kernelSources());
        if (stale != null) {
            fail(stale);
        }
    }

    @Test
    void aStaleFixtureFails() throws Exception {
        Map<String, byte[]> sources = kernelSources();
        assertThat(sources.keySet()).as("the kernel and its includes").contains(KERNEL.toString(),
                "src/main/cuda/key_tiles.cuh", "src/main/cuda/group_tiles.cuh", "src/main/cuda/row_tiles.cuh", "src/main/cuda/chunk_merge.cuh", "src/main/cuda/warp_ops.cuh", "src/main/cuda/packed_cache.cuh");
        assertThat(staleness(fixture(), sources)).isNull();
        // A recorded hash that is not the file's
        ObjectNode edited = (ObjectNode) fixture().deepCopy();
        ((ObjectNode) edited.path("sources_sha256")).put(KERNEL.toString(), "0".repeat(64));
        assertThat(staleness(edited, sources)).contains(KERNEL.toString()).contains("regenerate it with " + REGENERATE);
        // An included file changed (not the kernel's own source)
        Map<String, byte[]> changed = new LinkedHashMap<>(sources);
        changed.put("src/main/cuda/group_tiles.cuh", (new String(sources.get("src/main/cuda/group_tiles.cuh"),
                StandardCharsets.UTF_8) + "\n").getBytes(StandardCharsets.UTF_8));
        assertThat(staleness(fixture(), changed)).contains("group_tiles.cuh");
        // An include the fixture does not know
        Map<String, byte[]> more = new LinkedHashMap<>(sources);
        more.put("src/main/cuda/new_part.cuh", new byte[0]);
        assertThat(staleness(fixture(), more)).contains("new_part.cuh");
        // A file the fixture was counted from that the kernel no longer includes
        Map<String, byte[]> fewer = new LinkedHashMap<>(sources);
        fewer.remove("src/main/cuda/reductions.cuh");
        assertThat(staleness(fixture(), fewer)).contains("now compiles from " + fewer.size() + " (");
    }

    /** The model's kernel constants are the kernel's: a change to pnmix_decode.cu's (or its includes') defines fails here first. */
    @Test
    void theModelsConstantsAreTheKernelsDefines() throws IOException {
        StringBuilder sources = new StringBuilder();   // the kernel and its includes (the merge's merge_row: chunk_merge.cuh)
        kernelSources().values().forEach(b -> sources.append(new String(b, StandardCharsets.UTF_8)).append('\n'));
        String cu = sources.toString();
        assertThat(cu).containsPattern("#define HEADS_F32 " + CudaSplitKDecode.headsHeld(4) + "\\b")
                .containsPattern("#define WARPS " + CudaSplitKDecode.THREADS / 32 + "\\b")
                // CudaSplitKDecode.accRow: the merge's row, and which copy of the merge (CPL = row / 32) a head dim gets
                .contains("return d <= 32 ? 32 : d <= 64 ? 64 : d <= 128 ? 128 : 256;")
                // what sass-counts.py's per-key arithmetic assumes (VALUE_KEYS keys a team, 4 channels a key_scores
                // iteration)
                .contains("#define VALUE_KEYS(T) (sizeof(T) == 4 ? 8 :")
                .contains("for (int c = 0; c < d; c += 4, qc += 4 * HB) {");
    }
}
