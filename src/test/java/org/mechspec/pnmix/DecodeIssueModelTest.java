package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;
import static org.junit.jupiter.api.Assertions.fail;
import static org.mechspec.pnmix.DecodeIssueModel.DOC;
import static org.mechspec.pnmix.DecodeIssueModel.BEGIN;
import static org.mechspec.pnmix.DecodeIssueModel.END;
import static org.mechspec.pnmix.DecodeIssueModel.GPUS;
import static org.mechspec.pnmix.DecodeIssueModel.GROUP;
import static org.mechspec.pnmix.DecodeIssueModel.SHAPES;
import static org.mechspec.pnmix.DecodeIssueModel.SINK;
import static org.mechspec.pnmix.DecodeIssueModel.TOKENS;
import static org.mechspec.pnmix.DecodeIssueModel.copyRate;
import static org.mechspec.pnmix.DecodeIssueModel.counts;
import static org.mechspec.pnmix.DecodeIssueModel.fixture;
import static org.mechspec.pnmix.DecodeIssueModel.model;
import static org.mechspec.pnmix.DecodeIssueModel.split;
import static org.mechspec.pnmix.DecodeIssueModel.table;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.pnmix.DecodeIssueModel.KernelCounts;
import org.mechspec.pnmix.DecodeIssueModel.Row;
import org.mechspec.pnmix.DecodeIssueModel.Shape;

/**
 * The decode model ({@link DecodeIssueModel}): its issue time follows the SASS counts, the walk it adds them over holds
 * every key once, the host's split weighs rows as the kernel does, a measured copy rate replaces the assumed one, and
 * gpu.md's table is its output.
 */
@Tag("pn-mix")
class DecodeIssueModelTest {
    /** Doubling every count doubles every issue time, and moves the modelled time of every issue-bound row. */
    @Test
    void theIssueTimeFollowsTheCounts() throws Exception {
        JsonNode fixture = fixture();
        ObjectNode doubled = (ObjectNode) fixture.deepCopy();
        ObjectNode perKey = (ObjectNode) doubled.path("per_key");
        for (String cache : List.of("packed", "fp16")) {
            perKey.put(cache + "_f32_per_block_once", 2 * perKey.path(cache + "_f32_per_block_once").asDouble());
            for (Shape s : SHAPES) {
                ObjectNode walk = (ObjectNode) perKey.path(cache + "_f32_" + s.name()).path("walk");
                for (String part : List.of("group_window", "group_staged", "rows_window", "rows_iteration", "rows_block",
                        "rows_stretch", "rows_staged")) {
                    walk.put(part, 2 * walk.path(part).asDouble());
                }
            }
        }
        List<Row> base = model(fixture);
        List<Row> mutant = model(doubled);
        for (int i = 0; i < base.size(); i++) {
            Row a = base.get(i);
            Row b = mutant.get(i);
            assertThat(b.issueUs()).as("%s", a).isCloseTo(2 * a.issueUs(), offset(1e-9));
            assertThat(b.memoryUs()).isEqualTo(a.memoryUs());
            if (a.bound().equals("issue")) {
                assertThat(b.modelledUs() - a.modelledUs()).as("%s", a).isCloseTo(a.issueUs(), offset(1e-9));
            }
        }
        assertThat(base).anyMatch(r -> r.bound().equals("issue"));
    }

    /**
     * The walk holds every key of a chunk once, whatever the chunk's place and length against the sink and the groups;
     * windows of two blocks hold the same keys in fewer windows; and in the bench's 32k layer a chunk's interior
     * stretches are whole pairs (its ends, off the groups' pairs by the sink, are not).
     */
    @Test
    void theWalkHoldsEveryKeyOnce() {
        for (int group : new int[] {0, 20, 40, 64, 96, 128}) {
            for (int sink : new int[] {0, 4, 32}) {
                for (int[] c : new int[][] {{0, 96}, {96, 192}, {5, 520}, {520, 1040}, {1000, 1077}, {0, 1}}) {
                    int tokens = c[1] + 100;
                    int groups = group == 0 ? 0 : (tokens - sink) / group;
                    for (boolean pairs : new boolean[] {false, true}) {
                        DecodeWalk w = DecodeWalk.of(c[0], c[1], sink, groups, group, pairs && group > 0, false, 64, 2);
                        assertThat(w.keys()).as("group %d sink %d chunk %d..%d pairs %s", group, sink, c[0], c[1], pairs)
                                .isEqualTo(c[1] - c[0]);
                    }
                    if (group == 0) {   // an fp16 cache, its rows on tensor cores: every key once, one stretch a warp at most
                        DecodeWalk tiles = DecodeWalk.of(c[0], c[1], 0, 0, 0, false, true, 64, 2);
                        assertThat(tiles.keys()).isEqualTo(c[1] - c[0]);
                        assertThat(tiles.rowBlocks()).isBetween(tiles.rowsWindows(), 2 * tiles.rowsWindows());
                        assertThat(tiles.rowStretches()).isBetween(1L, (long) CudaSplitKDecode.WARPS);
                    }
                    DecodeWalk single = DecodeWalk.of(c[0], c[1], sink, groups, group, false, false, 64, 2);
                    DecodeWalk paired = DecodeWalk.of(c[0], c[1], sink, groups, group, group > 0, false, 64, 2);
                    assertThat(paired.groupWindows()).isLessThanOrEqualTo(single.groupWindows());
                }
            }
        }
        // 32k tokens on 132 SMs, 8 KV heads: 66 chunks a head wanted. The packed cache's split: chunks of four whole
        // groups (512 keys, 16 blocks in 8 windows of two, one group a warp), the first the sink's rows and two
        // groups, then the last group with the residual's first 64 rows (448 of the 512 a chunk may weigh: a row
        // weighs 5 keys) and its last 32 rows, 66 in all. Cut every 512 tokens instead, each would take 9 windows (its
        // first and last a pair's half) and its warps 5 groups' weights.
        ChunkSplit packed = split("packed", 32768, 8, 64, 132);
        int groups = (32768 - SINK) / GROUP;
        assertThat(packed.chunks()).isEqualTo(66);
        assertThat(packed.from(1)).isEqualTo(SINK + 2 * GROUP);
        assertThat(packed.from(64)).isEqualTo(SINK + (groups - 1) * GROUP);
        assertThat(packed.from(65)).isEqualTo(SINK + groups * GROUP + 64);
        assertThat(packed.longest()).isEqualTo(4 * GROUP);
        DecodeWalk interior = DecodeWalk.of(packed.from(5), packed.to(5), SINK, groups, GROUP, true, false, 64, 2);
        assertThat(List.of(interior.keys(), interior.groupWindows(), interior.groupsStaged())).containsExactly(512L, 8L, 4L);
        DecodeWalk cutEvery512 = DecodeWalk.of(5 * 512, 6 * 512, SINK, groups, GROUP, true, false, 64, 2);
        assertThat(List.of(cutEvery512.groupWindows(), cutEvery512.groupsStaged())).containsExactly(9L, 5L);
        assertThat(DecodeWalk.of(packed.from(5), packed.to(5), SINK, groups, GROUP, false, false, 64, 2).groupWindows()).isEqualTo(16);
        // the fp16 cache: 64 chunks of 512; one on tensor cores: 4 stretches of 128 keys, 2 windows of two blocks each
        ChunkSplit fp16Split = split("fp16", 32768, 8, 64, 132);
        assertThat(List.of(fp16Split.chunks(), fp16Split.longest(), fp16Split.from(5))).containsExactly(64, 512, 5 * 512);
        DecodeWalk fp16 = DecodeWalk.of(fp16Split.from(5), fp16Split.to(5), 0, 0, 0, false, true, 64, 2);
        assertThat(List.of(fp16.rowsWindows(), fp16.rowBlocks(), fp16.rowStretches(), fp16.rowsStaged(), fp16.rowsIterations()))
                .containsExactly(8L, 16L, 4L, 1L, 0L);
    }

    /**
     * ChunkSplit's weight of an fp16 row is what the fixture says such a row costs the fp32 packed kernel against a
     * quantized key at the layer shape (rows_window's per key in full 32-key windows against a group's in full pairs
     * of blocks with its staging), rounded: a kernel change that moves it fails here.
     */
    @Test
    void theSplitsRowWeightIsTheKernels() throws IOException {
        KernelCounts k = counts(fixture(), "packed", SHAPES.get(0));
        double row = (k.rowsWindow() + 32.0 / k.keysPerRowsIteration() * k.rowsIteration()) / 32;
        double key = k.groupWindow() / 64 + k.groupStaged() / GROUP;
        assertThat(Math.round(row / key)).as("an fp16 row %.1f, a quantized key %.1f warp instructions", row, key)
                .isEqualTo(ChunkSplit.ROW_WEIGHT);
    }

    /** A copy rate the bench measured on a GPU replaces the assumed one for that GPU only; an emulated one never does. */
    @Test
    void aMeasuredCopyRateReplacesTheAssumedOne(@TempDir Path reports) throws Exception {
        Files.writeString(reports.resolve("bench.nvidia-h200.json"),
                "{\"device\": {\"name\": \"NVIDIA H200\", \"emulated\": false, \"copy_rate\": {\"median_gb_s\": 3000.0}}}");
        Files.writeString(reports.resolve("bench.cuda-emulated.json"),
                "{\"device\": {\"name\": \"H100 (emulated)\", \"emulated\": true, \"copy_rate\": {\"median_gb_s\": 1.0}}}");
        JsonNode fixture = fixture();
        assertThat(copyRate(GPUS.get(0), reports).source()).isEqualTo("measured on NVIDIA H200 (bench.nvidia-h200.json)");
        assertThat(copyRate(GPUS.get(1), reports).source()).startsWith("assumed copy rate, not measured");
        List<Row> assumed = model(fixture, reports.resolve("none"));
        List<Row> measured = model(fixture, reports);
        for (int i = 0; i < assumed.size(); i++) {
            Row a = assumed.get(i);
            Row m = measured.get(i);
            double expected = a.gpu().equals("H200") ? m.megabytes() * 1e6 / 3000e9 * 1e6 : a.memoryUs();
            assertThat(m.memoryUs()).as("%s", m).isCloseTo(expected, offset(1e-9));
        }
    }

    /** gpu.md's table is this model's output; -Dmechspec.updateDocs=true writes it there. */
    @Test
    void theDocsTableIsTheModels() throws Exception {
        JsonNode fixture = fixture();
        List<Row> rows = model(fixture);
        List<String> table = table(rows, fixture);
        table.forEach(System.out::println);
        assertThat(rows).hasSize(GPUS.size() * SHAPES.size() * TOKENS.length * 2)
                .allSatisfy(r -> assertThat(r.modelledUs()).isPositive());
        List<String> doc = Files.readAllLines(DOC);
        int begin = doc.indexOf(BEGIN);
        int end = doc.indexOf(END);
        assertThat(begin).as("%s has the markers %s ... %s", DOC, BEGIN, END).isNotNegative();
        assertThat(end).isGreaterThan(begin);
        List<String> current = doc.subList(begin + 1, end);
        if (Boolean.getBoolean("mechspec.updateDocs")) {
            List<String> updated = new ArrayList<>(doc.subList(0, begin + 1));
            updated.addAll(table);
            updated.addAll(doc.subList(end, doc.size()));
            Files.write(DOC, updated);
            return;
        }
        if (!current.equals(table)) {
            fail(DOC + "'s decode model table is not the model's: rerun with "
                    + "mvn -B -o test -Dtest=DecodeIssueModelTest -Dmechspec.updateDocs=true");
        }
    }
}
