package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Evidence before a GPU: the split-K decode kernels (src/main/cuda/pnmix_decode.cu) as nvcc compiles them for sm_90,
 * read from the PTX ({@code nvcc -ptx}) and from ptxas' resource report ({@code nvcc -cubin -Xptxas -v}). Per chunk
 * kernel: 128-bit global loads of fp16 rows ({@code ld.global(.nc).v4}) and, in the packed kernels, of the key code
 * words as well; no integer division or remainder inside any loop of the kernel (a loop is the PTX between a label and
 * a later branch back to it; the kernel's prologue may divide); no local memory, stack frame or spills; and registers
 * and shared memory within the occupancy target, {@value CudaSplitKDecode#BLOCKS_PER_SM} blocks of
 * {@value CudaSplitKDecode#THREADS} threads per SM (the split rule's aim): at most 65536 / (4 · 128) = 128 registers
 * a thread, and 4 blocks' dynamic shared memory (plus the 1 KiB the driver reserves per block) within an H100/H200
 * SM's 228 KiB for every shape the bench and the contracts launch. This says nothing about speed; only a GPU does.
 *
 * <p>Needs only nvcc (CI has it); skipped, with the reason, without. {@code -Dmechspec.decodeKernelSource=FILE} checks
 * another copy of the file (how the old kernels were shown to fail it).
 */
@Tag("pn-mix")
class DecodeKernelCodeTest {
    static final List<String> PACKED_FP32_KERNELS = List.of("packed_decode_chunk_f32", "packed_decode_chunk_f32_b1", "packed_decode_chunk_f32_b2",
            "packed_decode_chunk_f32_b4");
    static final List<String> CHUNK_KERNELS = Stream.concat(Stream.of("packed_decode_chunk_f64", "fp16_decode_chunk_f64",
            "fp16_decode_chunk_f32"), PACKED_FP32_KERNELS.stream()).toList();
    /** Registers a thread may use for {@link CudaSplitKDecode#BLOCKS_PER_SM} blocks of {@link CudaSplitKDecode#THREADS}. */
    static final int MAX_REGISTERS = 65536 / (CudaSplitKDecode.BLOCKS_PER_SM * CudaSplitKDecode.THREADS);
    /** An H100/H200 SM's shared memory, and what the driver reserves per block. */
    static final int SM_SHARED_BYTES = 228 * 1024;
    static final int RESERVED_SHARED_PER_BLOCK = 1024;

    private static Map<String, String> ptx;
    private static String ptxText;
    private static Map<String, Resources> resources;
    private static String ptxasReport;

    record Resources(int registers, int stackFrame, int spillStores, int spillLoads, int staticShared) {
    }

    @BeforeAll
    static void compile(@TempDir Path dir) throws Exception {
        String nvcc = findNvcc();
        assumeTrue(nvcc != null, "no nvcc on this machine (PATH, /usr/local/cuda/bin, /usr/local/bin, /opt/cuda/bin; or -Dnvcc=PATH)");
        Path source = Path.of(System.getProperty("mechspec.decodeKernelSource", "src/main/cuda/pnmix_decode.cu")).toAbsolutePath();
        Path ptxFile = dir.resolve("pnmix_decode.ptx");
        run(nvcc, "-std=c++17", "-arch=sm_90", "-ptx", "-o", ptxFile.toString(), source.toString());
        ptxText = Files.readString(ptxFile);
        ptx = entries(ptxText);
        String report = run(nvcc, "-std=c++17", "-arch=sm_90", "-cubin", "-Xptxas", "-v", "-o", dir.resolve("pnmix_decode.cubin").toString(),
                source.toString());
        resources = resources(report);
        ptxasReport = report;
        System.out.println("[DecodeKernelCodeTest] " + source + " for sm_90:");
        for (String k : CHUNK_KERNELS) {
            Resources r = resources.get(k);
            System.out.printf("  %-26s v4 loads %d, div/rem in loops %d (in kernel %d), registers %d, stack %d, spills %d/%d, static smem %d%n", k,
                    vectorLoads(ptx.get(k)), divisionsInLoops(ptx.get(k)).size(), divisions(ptx.get(k)), r.registers(), r.stackFrame(),
                    r.spillStores(), r.spillLoads(), r.staticShared());
        }
    }

    @Test
    void everyChunkKernelReadsFp16RowsWith128BitLoads() {
        for (String k : CHUNK_KERNELS) {
            assertThat(vectorLoads(ptx.get(k))).as("%s: ld.global(.nc).v4 loads (16 bytes of a row at once)", k).isGreaterThanOrEqualTo(1);
        }
    }

    @Test
    void packedKernelsAlsoReadCodeWordsWith128BitLoads() {
        // The packed kernels read the sink's and the residual's fp16 rows as the fp16 kernels do; the code words are
        // the 128-bit loads beyond those.
        // (Not the fp32 _bB kernels: their groups go to tensor cores only, their code words in narrower loads.)
        for (String bits : List.of("f64", "f32")) {
            String packed = "packed_decode_chunk_" + bits;
            String fp16 = "fp16_decode_chunk_" + bits;
            assertThat(vectorLoads(ptx.get(packed))).as("%s: 128-bit loads of code words besides the fp16 rows' (%s: %d)", packed, fp16,
                    vectorLoads(ptx.get(fp16))).isGreaterThan(vectorLoads(ptx.get(fp16)));
        }
    }

    @Test
    void theHostLaunchesKernelsThisFileHasAndTheTensorCoreValuesOnlyWhereTheyFit() {
        for (boolean fp32 : new boolean[] {false, true}) {
            for (boolean fp16Cache : new boolean[] {false, true}) {
                for (int d : new int[] {6, 16, 32, 48, 64, 96, 128, 160}) {
                    for (int bits = 1; bits <= 8; bits++) {
                        for (int gc : new int[] {d, 16, 32}) {
                            String k = CudaSplitKDecode.chunkKernel(fp16Cache, fp32, gc, d, bits);
                            assertThat(ptx).as("fp32 %s, fp16 cache %s, d %d, %d-bit values, groups of %d", fp32, fp16Cache, d, bits, gc)
                                    .containsKey(k);
                        }
                    }
                }
            }
        }
        // the _bB kernels: a group a whole head, d a power of two from 16 to 128, a token's codes 1 to 8 whole words
        assertThat(CudaSplitKDecode.chunkKernel(false, true, 128, 128, 2)).isEqualTo("packed_decode_chunk_f32_b2");
        assertThat(CudaSplitKDecode.chunkKernel(false, true, 32, 32, 1)).isEqualTo("packed_decode_chunk_f32_b1");
        assertThat(CudaSplitKDecode.chunkKernel(false, true, 64, 64, 4)).isEqualTo("packed_decode_chunk_f32_b4");
        assertThat(CudaSplitKDecode.chunkKernel(false, true, 128, 128, 4)).as("d·b > 256").isEqualTo("packed_decode_chunk_f32");
        assertThat(CudaSplitKDecode.chunkKernel(false, true, 16, 16, 1)).as("d·b not whole words").isEqualTo("packed_decode_chunk_f32");
        assertThat(CudaSplitKDecode.chunkKernel(false, true, 16, 64, 2)).as("a value group not a head").isEqualTo("packed_decode_chunk_f32");
        assertThat(CudaSplitKDecode.chunkKernel(false, true, 80, 80, 2)).as("d = 80: runs of 20 bits cross words").isEqualTo("packed_decode_chunk_f32");
        assertThat(CudaSplitKDecode.chunkKernel(false, true, 16, 16, 4)).as("d = 16: one m-tile").isEqualTo("packed_decode_chunk_f32_b4");
        assertThat(CudaSplitKDecode.chunkKernel(false, true, 40, 40, 2)).as("d not a multiple of 16").isEqualTo("packed_decode_chunk_f32");
        assertThat(CudaSplitKDecode.chunkKernel(false, true, 160, 160, 1)).as("d > 128").isEqualTo("packed_decode_chunk_f32");
        assertThat(CudaSplitKDecode.chunkKernel(false, true, 64, 64, 3)).as("3-bit values").isEqualTo("packed_decode_chunk_f32");
        assertThat(CudaSplitKDecode.chunkKernel(false, false, 128, 128, 2)).isEqualTo("packed_decode_chunk_f64");
        assertThat(CudaSplitKDecode.chunkKernel(true, true, 128, 128, 2)).isEqualTo("fp16_decode_chunk_f32");
    }

    /**
     * The fused merge's ordering, which the emulator cannot check (it runs a launch's blocks one after another, so a
     * missing fence changes nothing there): in every copy of merge_if_last each thread's fence (membar.gl) comes before
     * the block's barrier and count (atom.global.add), and the partials are read only after a second barrier and a
     * second fence; every chunk kernel calls it.
     */
    @Test
    void theMergeFencesThePartialsBeforeItsCountAndReadsThemAfterIt() {
        Map<String, String> merges = functions(ptxText, "merge_if_last");
        assertThat(merges).as("merge_if_last's copies (one per element type and channels a lane)").hasSize(8);
        for (Map.Entry<String, String> e : merges.entrySet()) {
            String body = e.getValue();
            int fence = body.indexOf("membar.gl;");
            int barrier = body.indexOf("bar.sync", fence);
            int count = body.indexOf("atom.global.add", barrier);
            int verdict = body.indexOf("bar.sync", count);
            int acquire = body.indexOf("membar.gl;", verdict);
            int firstRead = body.indexOf("ld.global");
            assertThat(List.of(fence, barrier, count, verdict, acquire)).as("%s: fence, barrier, count, barrier, fence", e.getKey())
                    .doesNotContain(-1).isSorted();
            assertThat(firstRead).as("%s: the partials read after the second fence", e.getKey()).isGreaterThan(acquire);
        }
        for (String k : CHUNK_KERNELS) {
            assertThat(ptx.get(k)).as("%s calls merge_if_last", k).containsPattern("call\\.uni\\s+\\w*merge_if_last");
        }
    }

    @Test
    void noIntegerDivisionOrRemainderInAnyLoop() {
        for (String k : CHUNK_KERNELS) {
            assertThat(divisionsInLoops(ptx.get(k))).as("%s: div./rem. inside a loop", k).isEmpty();
        }
    }

    @Test
    void noLocalMemoryStackFrameOrSpills() {
        for (String k : CHUNK_KERNELS) {
            Resources r = resources.get(k);
            assertThat(r).as("%s: ptxas report", k).isNotNull();
            assertThat(r.stackFrame() + r.spillStores() + r.spillLoads()).as("%s: stack frame and spill bytes (%s)", k, r).isZero();
            assertThat(ptx.get(k)).as("%s: local memory in PTX", k).doesNotContain(".local");
        }
        // The functions the kernels call (merge_if_last, not inlined) have their own frame lines: none may spill either.
        Matcher frames = Pattern.compile("(\\d+) bytes stack frame, (\\d+) bytes spill stores, (\\d+) bytes spill loads").matcher(ptxasReport);
        int lines = 0;
        while (frames.find()) {
            lines++;
            assertThat(frames.group()).as("every function in ptxas' report").isEqualTo("0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads");
        }
        assertThat(lines).as("frame lines in ptxas' report").isGreaterThan(CHUNK_KERNELS.size());
    }

    @Test
    void registersAndSharedMemoryFitFourBlocksPerSm() {
        for (String k : CHUNK_KERNELS) {
            Resources r = resources.get(k);
            assertThat(r.registers()).as("%s: registers for %d blocks of %d threads per SM", k, CudaSplitKDecode.BLOCKS_PER_SM,
                    CudaSplitKDecode.THREADS).isLessThanOrEqualTo(MAX_REGISTERS);
            assertThat(r.staticShared()).as("%s: static shared memory", k).isZero();
        }
        // Dynamic shared memory: the host's layout for the bench's shapes and the contracts' (GQA 1-8, d 32/64/128).
        List<int[]> shapes = new ArrayList<>();
        for (DecodeBench.Shape s : DecodeBench.SHAPES) {
            shapes.add(new int[] {s.queryHeads() / s.kvHeads(), s.headDim()});
        }
        for (int d : new int[] {32, 64, 128}) {
            for (int g : new int[] {1, 2, 3, 4, 5, 8}) {
                shapes.add(new int[] {g, d});
            }
        }
        for (int[] s : shapes) {
            for (int e : new int[] {4, 8}) {
                int tile = CudaSplitKDecode.tileKeys(s[0], s[1], e);
                int bytes = CudaSplitKDecode.sharedBytes(s[0], s[1], tile, e, true);
                assertThat((long) CudaSplitKDecode.BLOCKS_PER_SM * (bytes + RESERVED_SHARED_PER_BLOCK))
                        .as("gq %d, d %d, %d-byte elements: %d blocks of %d B shared", s[0], s[1], e, CudaSplitKDecode.BLOCKS_PER_SM, bytes)
                        .isLessThanOrEqualTo(SM_SHARED_BYTES);
            }
        }
    }

    static int vectorLoads(String entry) {
        return count(entry, Pattern.compile("\\bld\\.global(\\.nc)?\\.v4\\."));
    }

    static int divisions(String entry) {
        return count(entry, Pattern.compile("\\b(div|rem)\\.(s|u)\\d+"));
    }

    /** The div./rem. instructions between a label and a later branch back to it. */
    static List<String> divisionsInLoops(String entry) {
        String[] lines = entry.split("\n");
        Map<String, Integer> labels = new LinkedHashMap<>();
        Pattern label = Pattern.compile("^\\s*(\\$[\\w$]+):");
        Pattern branch = Pattern.compile("\\bbra(\\.uni)?\\s+(\\$[\\w$]+);");
        Pattern div = Pattern.compile("\\b(div|rem)\\.(s|u)\\d+");
        for (int i = 0; i < lines.length; i++) {
            Matcher m = label.matcher(lines[i]);
            if (m.find()) {
                labels.put(m.group(1), i);
            }
        }
        boolean[] inLoop = new boolean[lines.length];
        for (int i = 0; i < lines.length; i++) {
            Matcher m = branch.matcher(lines[i]);
            if (m.find() && labels.containsKey(m.group(2)) && labels.get(m.group(2)) < i) {
                for (int j = labels.get(m.group(2)); j <= i; j++) {
                    inLoop[j] = true;
                }
            }
        }
        List<String> found = new ArrayList<>();
        for (int i = 0; i < lines.length; i++) {
            if (inLoop[i] && div.matcher(lines[i]).find()) {
                found.add(lines[i].strip());
            }
        }
        return found;
    }

    private static int count(String text, Pattern p) {
        Matcher m = p.matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    /** Each .entry's text, from its .entry line to the closing brace at the start of a line. */
    static Map<String, String> entries(String ptxText) {
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = Pattern.compile("\\.entry\\s+(\\w+)\\(").matcher(ptxText);
        while (m.find()) {
            int end = ptxText.indexOf("\n}", m.start());
            out.put(m.group(1), ptxText.substring(m.start(), end < 0 ? ptxText.length() : end));
        }
        return out;
    }

    /** The bodies of the PTX's non-entry functions (.func) whose names contain {@code part}, by name. */
    static Map<String, String> functions(String ptxText, String part) {
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = Pattern.compile("\\.func\\s+(\\w*" + Pattern.quote(part) + "\\w*)\\(").matcher(ptxText);
        while (m.find()) {
            int body = ptxText.indexOf("\n{", m.end());
            int end = ptxText.indexOf("\n}", body);
            out.put(m.group(1), ptxText.substring(body, end));
        }
        return out;
    }

    /** ptxas -v's lines per entry function. */
    static Map<String, Resources> resources(String report) {
        Map<String, Resources> out = new LinkedHashMap<>();
        String[] parts = report.split("Compiling entry function '");
        Pattern frame = Pattern.compile("(\\d+) bytes stack frame, (\\d+) bytes spill stores, (\\d+) bytes spill loads");
        Pattern regs = Pattern.compile("Used (\\d+) registers");
        Pattern smem = Pattern.compile("(\\d+) bytes smem");
        for (int i = 1; i < parts.length; i++) {
            String name = parts[i].substring(0, parts[i].indexOf('\''));
            Matcher f = frame.matcher(parts[i]);
            Matcher r = regs.matcher(parts[i]);
            Matcher s = smem.matcher(parts[i]);
            if (f.find() && r.find()) {
                out.put(name, new Resources(Integer.parseInt(r.group(1)), Integer.parseInt(f.group(1)), Integer.parseInt(f.group(2)),
                        Integer.parseInt(f.group(3)), s.find() ? Integer.parseInt(s.group(1)) : 0));
            }
        }
        return out;
    }

    private static String findNvcc() {
        List<String> candidates = new ArrayList<>();
        String given = System.getProperty("nvcc", "");
        if (!given.isBlank()) {
            candidates.add(given);
        }
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty()) {
                candidates.add(Path.of(dir, "nvcc").toString());
            }
        }
        candidates.addAll(List.of("/usr/local/cuda/bin/nvcc", "/usr/local/bin/nvcc", "/opt/cuda/bin/nvcc"));
        for (String c : candidates) {
            if (Files.isExecutable(Path.of(c))) {
                return c;
            }
        }
        return null;
    }

    private static String run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int rc = p.waitFor();
        assertThat(rc).as("%s failed:%n%s", String.join(" ", command), out).isZero();
        return out;
    }
}
