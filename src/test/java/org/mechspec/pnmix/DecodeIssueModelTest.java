package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.offset;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A MODEL, not a measurement: the split-K decode kernels (pnmix_decode.cu, fp32) on an H200 and an H100 SXM, for the
 * bench's two shapes at 4k, 32k and 128k tokens. It prints the table in src/site/markdown/gpu.md ("Decode model")
 * and fails when that table differs; {@code -Dmechspec.updateDocs=true} rewrites it in place:
 * {@code mvn -B -o test -Dtest=DecodeIssueModelTest -Dmechspec.updateDocs=true}.
 *
 * <p>What it counts. Warp instructions, from the compiled SASS: {@code src/main/cuda/sass-counts.py} disassembles
 * the kernels for sm_90 and writes {@code fixtures/sass/pnmix_decode.sm_90.json}, whose {@code per_key} section gives
 * the warp instructions one (key, KV head) costs in each chunk kernel, what a block costs once, and the merge's
 * counts (merge_if_last, run by the last block of each KV head). The fixture records pnmix_decode.cu's SHA-256; a test here fails when the kernel has changed
 * since.
 *
 * <p>A call is one launch: max(issue time, memory time) + merge time + one launch gap:
 * <ul>
 *   <li>Issue time: an SM's {@value #SCHEDULERS} schedulers each issue at most one warp instruction a clock at
 *       {@value #CLOCK_GHZ} GHz (boost). The busiest SM runs ⌈grid / SMs⌉ blocks (the host's split rule, from
 *       {@link CudaSplitKDecode}), each block the instructions of the windows its warps take over its chunk
 *       ({@link DecodeWalk}: per window, per group entered, per rows iteration) and its
 *       once-per-block ones: one block of the costliest chunk (the sink's or the residual's) and the rest of the median
 *       chunk; with fewer blocks than SMs the idle SMs do not help. Stalls (a scheduler with no ready warp) are not
 *       modelled, so this is a floor.</li>
 *   <li>Memory time: the bytes of one call (cache, then the split-K partials written and read back) at the GPU's copy
 *       rate as {@code mechspec bench} measured it (device-to-device copies, in a {@code reports/bench.<device>.json}
 *       of that GPU), or, until one is committed, {@value #ASSUMED_COPY_EFFICIENCY} × the datasheet's HBM rate, an
 *       assumed copy rate, not measured. The table says which.</li>
 *   <li>Merge: after every chunk block of a KV head, the last one merges the head's query heads, one warp a head
 *       (⌈group / {@value #MERGE_WARPS}⌉ heads a warp, one after the other), the KV heads' merges in parallel; at
 *       most one instruction a clock, plus {@value #ASSUMED_L2_LATENCY_CYCLES} cycles of L2 latency (assumed) for
 *       the block's counter, per unrolled chunk iteration (its loads feed its multiply-adds) and for the max and the
 *       denominator's loads. It is the tail of the launch: nothing overlaps it.</li>
 *   <li>Launch gap: {@value #ASSUMED_LAUNCH_GAP_US} µs per kernel launch, one a call (assumed, not measured).</li>
 * </ul>
 */
@Tag("pn-mix")
class DecodeIssueModelTest {
    static final Path KERNEL = Path.of("src/main/cuda/pnmix_decode.cu");
    static final Path FIXTURE = Path.of("fixtures/sass/pnmix_decode.sm_90.json");
    static final Path DOC = Path.of("src/site/markdown/gpu.md");
    static final Path REPORTS = Path.of("reports");
    static final String REGENERATE = "NVDISASM=/path/to/nvdisasm python3 src/main/cuda/sass-counts.py";
    static final String BEGIN = "<!-- decode-model-table: begin (DecodeIssueModelTest; -Dmechspec.updateDocs=true rewrites) -->";
    static final String END = "<!-- decode-model-table: end -->";

    static final int SCHEDULERS = 4;
    static final double CLOCK_GHZ = 1.98;
    static final double ASSUMED_COPY_EFFICIENCY = 0.90;
    static final double ASSUMED_L2_LATENCY_CYCLES = 260;
    static final double ASSUMED_LAUNCH_GAP_US = 2.0;
    /** Warps of the merging block: CudaSplitKDecode.WARPS. */
    static final int MERGE_WARPS = CudaSplitKDecode.WARPS;
    /** Tokens kept in fp16 at the start, tokens a quantized group (the bench's pinned policy, PnMixConfig). */
    static final int SINK = 32;
    static final int GROUP = 128;
    /** A channel's bit width and stream offset (4-byte ints) and fp16 scale/zero, per group. */
    static final int KEY_METADATA_BYTES = 12;

    /** {@code key}: what a device name of this GPU contains ("H200"). */
    record Gpu(String name, String key, int sms, double datasheetBytesPerSecond) {
    }

    /** The copy rate the memory time uses, and where it comes from. */
    record CopyRate(double bytesPerSecond, String source) {
    }

    record Shape(String name, int queryHeads, int kvHeads, int headDim) {
    }

    static final List<Gpu> GPUS = List.of(new Gpu("H200", "H200", 132, 4.8e12), new Gpu("H100-SXM", "H100", 132, 3.35e12));
    static final List<Shape> SHAPES = List.of(new Shape("layer-32q-8kv-128d", 32, 8, 128), new Shape("pn-mix-8q-2kv-32d", 8, 2, 32));
    static final int[] TOKENS = {4096, 32768, 131072};

    /**
     * The fixture's counts for one chunk kernel and shape ({@code per_key.<kernel>.walk}), each for one pass of the
     * held query heads: a window of a quantized group (one block or two, its keys and values), a group a warp enters (its weights
     * staged), a window of fp16 rows and a rows_window iteration (keysPerRowsIteration keys), or where the rows are on
     * tensor cores (rowTiles: the fp16 cache's kernel) a rows window, a block it scores, a warp's stretch and the
     * query's staging (once a block); and once per block.
     */
    record KernelCounts(int passes, double groupWindow, double groupStaged, double rowsWindow, double rowsIteration,
                        int keysPerRowsIteration, boolean pairs, boolean rowTiles, double rowsBlock, double rowsStretch, double rowsStaged,
                        double perBlock) {
        /** Warp instructions of one chunk block that walks w. */
        double instructions(DecodeWalk w) {
            return passes * (w.groupWindows() * groupWindow + w.groupsStaged() * groupStaged
                    + w.rowsWindows() * rowsWindow + w.rowsIterations() * rowsIteration + w.rowBlocks() * rowsBlock
                    + w.rowStretches() * rowsStretch + w.rowsStaged() * rowsStaged) + perBlock;
        }
    }

    /**
     * The merge's counts for one head dim (its copy for CPL = {@link CudaSplitKDecode#accRow} / 32 channels a lane):
     * outside its loops once, per query head, per 32 chunks, per j iteration of chunksPerIteration chunks, and per
     * tail iteration (the last group's chunks past its whole iterations, where chunksPerIteration is below 32).
     */
    record MergeCounts(double outside, double perHead, double per32Chunks, int chunksPerIteration, double perIteration,
                       double perTailIteration) {
    }

    record Row(String gpu, String shape, int tokens, String cache, int grid, double megabytes, double issueUs, double memoryUs,
               double mergeLaunchUs, double modelledUs, String bound, double ratio) {
    }

    static JsonNode fixture() throws IOException {
        return new ObjectMapper().readTree(FIXTURE.toFile());
    }

    static KernelCounts counts(JsonNode fixture, String cache, Shape s) {
        JsonNode perKey = fixture.path("per_key");
        JsonNode w = perKey.path(cache + "_f32_" + s.name()).path("walk");
        if (w.isMissingNode()) {
            throw new IllegalStateException(FIXTURE + " has no per_key." + cache + "_f32_" + s.name() + ".walk: regenerate it with " + REGENERATE);
        }
        return new KernelCounts(w.path("passes").asInt(), w.path("group_window").asDouble(),
                w.path("group_staged").asDouble(), w.path("rows_window").asDouble(), w.path("rows_iteration").asDouble(),
                w.path("keys_per_rows_iteration").asInt(1), w.path("pairs").asBoolean(), w.has("rows_block"),
                w.path("rows_block").asDouble(), w.path("rows_stretch").asDouble(), w.path("rows_staged").asDouble(),
                perKey.path(cache + "_f32_per_block_once").asDouble());
    }

    /**
     * The host's automatic split ({@link ChunkSplit#balanced}, {@link CudaSplitKDecode#chunksWanted}) of the bench's
     * cache: SINK fp16 rows, then whole groups of GROUP tokens, then the residual's rows; or all fp16 rows.
     */
    static ChunkSplit split(String cache, int tokens, int kvHeads, int tile, int sms) {
        int wanted = CudaSplitKDecode.chunksWanted(tokens, kvHeads, tile, sms);
        if (cache.equals("fp16")) {
            return ChunkSplit.balanced(0, 0, 0, tokens, tile, wanted);
        }
        int sink = Math.min(tokens, SINK);
        int groups = Math.max(0, (tokens - sink) / GROUP);
        return ChunkSplit.balanced(sink, GROUP, groups, tokens - sink - groups * GROUP, tile, wanted);
    }

    /**
     * Warp instructions the busiest SM's blocks issue: one block of the costliest chunk (the chunks differ at the
     * ends: the sink's and the residual's fp16 rows, a shorter last chunk; a KV head's chunks are consecutive blocks,
     * so the costliest of different heads land on different SMs) and the rest of a typical one (the median chunk),
     * each from the windows it really takes (DecodeWalk) in the bench's cache: SINK fp16 rows, then whole groups of
     * GROUP tokens, then the residual's rows.
     */
    static double smInstructions(KernelCounts k, String cache, int tokens, ChunkSplit split, int tile, int blocksOnSm) {
        int sink = Math.min(tokens, SINK);
        int groups = Math.max(0, (tokens - sink) / GROUP);
        List<Double> each = new ArrayList<>();
        for (int c = 0; c < split.chunks(); c++) {
            int from = split.from(c), to = split.to(c);
            DecodeWalk w = cache.equals("fp16") ? DecodeWalk.of(from, to, 0, 0, 0, false, k.rowTiles(), tile, k.keysPerRowsIteration())
                    : DecodeWalk.of(from, to, sink, groups, GROUP, k.pairs(), false, tile, k.keysPerRowsIteration());
            each.add(k.instructions(w));
        }
        each.sort(null);
        return each.get(each.size() - 1) + (blocksOnSm - 1) * each.get(each.size() / 2);
    }

    static MergeCounts merge(JsonNode fixture, int headDim) {
        JsonNode c = fixture.path("per_key").path("merge_f32").path("by_channels_a_lane").path(String.valueOf(CudaSplitKDecode.accRow(headDim) / 32));
        return new MergeCounts(c.path("outside_loops").asDouble(), c.path("per_head").asDouble(),
                c.path("per_32_chunks").asDouble(), c.path("chunks_per_j_iteration").asInt(), c.path("per_j_iteration").asDouble(),
                c.path("per_tail_iteration").asDouble());
    }

    /** Bytes one call moves: the packed cache (or fp16 K and V), then the fp32 partials written and read back. */
    static double bytes(String cache, Shape s, int tokens, int chunks) {
        double channels = (double) s.kvHeads() * s.headDim();
        double partials = 2.0 * s.queryHeads() * chunks * (s.headDim() + 2) * 4;
        if (cache.equals("fp16")) {
            return tokens * channels * 2 * 2 + partials;
        }
        int sink = Math.min(tokens, SINK);
        int groups = Math.max(0, (tokens - sink) / GROUP);
        int rows = tokens - groups * GROUP;   // sink and residual, fp16
        int valueGroup = Math.min(128, s.headDim());
        double keys = groups * channels * (GROUP * 2 / 8.0 + KEY_METADATA_BYTES);   // half 3-bit, half 1-bit channels
        double values = groups * GROUP * (channels * 2 / 8.0 + channels / valueGroup * 4);   // 2-bit codes, fp16 scale/zero
        return keys + values + rows * channels * 2 * 2 + partials;
    }

    /**
     * The median copy rate of a {@code bench.*.json} in {@code reports} from a GPU whose name contains the GPU's key
     * (not the emulator), or the assumed rate.
     */
    static CopyRate copyRate(Gpu g, Path reports) throws IOException {
        if (Files.isDirectory(reports)) {
            try (var files = Files.list(reports)) {
                for (Path f : files.sorted().toList()) {
                    String name = f.getFileName().toString();
                    if (!name.startsWith("bench.") || !name.endsWith(".json")) {
                        continue;
                    }
                    JsonNode device = new ObjectMapper().readTree(f.toFile()).path("device");
                    double gbs = device.path("copy_rate").path("median_gb_s").asDouble(Double.NaN);
                    if (!device.path("emulated").asBoolean(true) && device.path("name").asText().contains(g.key()) && gbs > 0) {
                        return new CopyRate(gbs * 1e9, "measured on " + device.path("name").asText() + " (" + reports.relativize(f) + ")");
                    }
                }
            }
        }
        return new CopyRate(ASSUMED_COPY_EFFICIENCY * g.datasheetBytesPerSecond(), String.format(Locale.ROOT,
                "assumed copy rate, not measured: %.0f%% of the datasheet", 100 * ASSUMED_COPY_EFFICIENCY));
    }

    static List<Row> model(JsonNode fixture) throws IOException {
        return model(fixture, REPORTS);
    }

    static List<Row> model(JsonNode fixture, Path reports) throws IOException {
        List<Row> rows = new ArrayList<>();
        double clock = CLOCK_GHZ * 1e9;
        for (Gpu g : GPUS) {
            double copyRate = copyRate(g, reports).bytesPerSecond();
            for (Shape s : SHAPES) {
                MergeCounts c = merge(fixture, s.headDim());
                int gq = s.queryHeads() / s.kvHeads();
                int tile = CudaSplitKDecode.tileKeys(gq, s.headDim(), 4);
                for (int tokens : TOKENS) {
                    double fp16Time = 0;
                    for (String cache : List.of("fp16", "packed")) {
                        ChunkSplit split = split(cache, tokens, s.kvHeads(), tile, g.sms());
                        int chunks = split.chunks();
                        int grid = s.kvHeads() * chunks;
                        int blocksOnBusiestSm = (grid + g.sms() - 1) / g.sms();
                        int blocksOf32 = (chunks + 31) / 32;
                        // groups of 32 chunks in j iterations of U; the last group's chunks past its whole iterations
                        // in one tail iteration (where U = 32 the group is one iteration: per 32 chunks holds it)
                        int u = c.chunksPerIteration();
                        int whole = chunks / 32 * (32 / u) + chunks % 32 / u;
                        int tails = u < 32 && chunks % 32 % u != 0 ? 1 : 0;
                        int iterations = u < 32 ? whole + tails : blocksOf32;
                        int headsPerWarp = (gq + MERGE_WARPS - 1) / MERGE_WARPS;
                        double perHead = c.perHead() + c.per32Chunks() * blocksOf32 + c.perIteration() * whole
                                + c.perTailIteration() * tails;
                        double mergeInstructions = c.outside() + headsPerWarp * perHead;
                        double mergeLatencies = 1 + headsPerWarp * (iterations + 2);
                        double mergeSeconds = (mergeInstructions + mergeLatencies * ASSUMED_L2_LATENCY_CYCLES) / clock;
                        double mergeLaunch = mergeSeconds + ASSUMED_LAUNCH_GAP_US * 1e-6;
                        KernelCounts k = counts(fixture, cache, s);
                        double issue = smInstructions(k, cache, tokens, split, tile, blocksOnBusiestSm) / (SCHEDULERS * clock);
                        double b = bytes(cache, s, tokens, chunks);
                        double memory = b / copyRate;
                        double time = Math.max(issue, memory) + mergeLaunch;
                        if (cache.equals("fp16")) {
                            fp16Time = time;
                        }
                        double ratio = cache.equals("packed") ? time / fp16Time : Double.NaN;
                        rows.add(new Row(g.name(), s.name(), tokens, cache, grid, b / 1e6, issue * 1e6, memory * 1e6,
                                mergeLaunch * 1e6, time * 1e6, issue >= memory ? "issue" : "memory", ratio));
                    }
                }
            }
        }
        return rows;
    }

    /** The markdown table the doc carries between BEGIN and END. */
    static List<String> table(List<Row> rows, JsonNode fixture) throws IOException {
        List<String> out = new ArrayList<>();
        String nvcc = fixture.path("nvcc").asText().replace("Build ", "");
        StringBuilder rates = new StringBuilder();
        for (Gpu g : GPUS) {
            CopyRate c = copyRate(g, REPORTS);
            rates.append(String.format(Locale.ROOT, "%s %.0f GB/s (%s); ", g.name(), c.bytesPerSecond() / 1e9, c.source()));
        }
        out.add(String.format(Locale.ROOT, "MODELLED, not measured (DecodeIssueModelTest, fp32; SASS of nvcc %s, fixture %s): "
                + "%d schedulers × 1 warp instruction a clock at %.2f GHz; copy rate %sL2 latency %.0f cycles and %.1f µs a "
                + "launch (assumed).", nvcc, FIXTURE, SCHEDULERS, CLOCK_GHZ, rates, ASSUMED_L2_LATENCY_CYCLES, ASSUMED_LAUNCH_GAP_US));
        out.add("");
        out.add("| GPU | shape | tokens | cache | grid | MB a call | issue µs | memory µs | merge + launch µs | modelled µs | bound by | packed/fp16 |");
        out.add("|---|---|---|---|---|---|---|---|---|---|---|---|");
        for (Row r : rows) {
            String ratio = Double.isNaN(r.ratio()) ? "" : String.format(Locale.ROOT, "%.2f", r.ratio());
            out.add(String.format(Locale.ROOT, "| %s | %s | %dk | %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %s | %s |",
                    r.gpu(), r.shape(), r.tokens() / 1024, r.cache(), r.grid(), r.megabytes(), r.issueUs(), r.memoryUs(),
                    r.mergeLaunchUs(), r.modelledUs(), r.bound(), ratio));
        }
        return out;
    }

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
