package org.mechspec.pnmix;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A MODEL, not a measurement: the split-K decode kernels (pnmix_decode.cu, fp32) on an H200 and an H100 SXM, for the
 * bench's two shapes at 4k, 32k and 128k tokens: the table in src/site/markdown/gpu.md ("Decode model"), which
 * DecodeIssueModelTest checks against this model ({@code -Dmechspec.updateDocs=true} rewrites it in place:
 * {@code mvn -B -o test -Dtest=DecodeIssueModelTest -Dmechspec.updateDocs=true}).
 *
 * <p>What it counts. Warp instructions, from the compiled SASS: {@code src/main/cuda/sass-counts.py} disassembles
 * the kernels for sm_90 and writes {@code fixtures/sass/pnmix_decode.sm_90.json}, whose {@code per_key} section gives
 * the warp instructions one (key, KV head) costs in each chunk kernel, what a block costs once, and the merge's
 * counts (merge_if_last, run by the last block of each KV head). The fixture records the SHA-256 of pnmix_decode.cu and of its includes; SassFixtureTest fails
 * when one has changed since.
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
final class DecodeIssueModel {
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

    private DecodeIssueModel() {
    }
}
