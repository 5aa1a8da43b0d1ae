package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A MODEL, not a measurement: Little's-law estimate of the split-K decode kernels (pnmix_decode.cu) on an H200 and an
 * H100 SXM, for the bench's two shapes at 4k, 32k and 128k tokens. It prints the table src/site/markdown/gpu.md ("Decode benchmark",
 * "Roofline model") quotes; rerun it after changing the kernels or the launch:
 * {@code mvn -B -o test -Dtest=DecodeRooflineModelTest}.
 *
 * <p>Assumptions, each stated in the table's notes:
 * <ul>
 *   <li>HBM load latency {@value #LATENCY_CYCLES} cycles at {@value #CLOCK_GHZ} GHz (the GPU review's figure), so an
 *       SM must hold peak × latency / SMs bytes in flight to reach peak (Little's law).</li>
 *   <li>Launch: the host's own rule (tile, chunk, grid, shared memory from {@link CudaSplitKDecode}); blocks resident
 *       per SM = min(grid / SMs, shared-memory limit, register limit at the registers ptxas reports for the fp32
 *       kernels ({@value #FP16_REGISTERS} fp16, {@value #PACKED_REGISTERS} packed: DecodeKernelCodeTest prints them)).</li>
 *   <li>The chunk kernel has no barrier inside a chunk (warps merge once at its end), and a key's K and V loads are
 *       issued together, so a call's memory time is its bytes over min(peak, resident blocks × bytes in flight per
 *       block × SMs / latency). Query heads beyond {@link CudaSplitKDecode#headsHeld} walk the chunk again; that
 *       pass is counted as reading the chunk again from HBM (the bench's groups of 4 take one pass in fp32).</li>
 *   <li>Bytes in flight per block (distinct bytes; the four warps walk four quarters of the chunk, so their bytes
 *       differ): fp16, 128 lanes × 16 B of K and 16 B of V (a team of d/8 lanes per key, each lane 8 channels);
 *       packed keys, a lane a channel: its 16-byte code word and the next channel's 12 bytes of metadata (bit width,
 *       stream offset, scale/zero), loaded one channel ahead, so a lane's d/32 channels take d/32 + 1 latencies and
 *       that share of its 28 B counts (half at d = 32, four fifths at 128); packed values,
 *       per warp {@value #VALUE_KEYS} × 32/R keys × (d·2/8 code bytes + 4 B of scale/zero per 32 channels).</li>
 *   <li>Shuffles at one warp-wide shuffle per clock per SM (32 lanes a clock): fp16, log2(R) per key and head over
 *       the 32/R keys a warp holds; packed, 20 per 4 keys × 4 heads (one reduce-scatter over the channels of every
 *       held head's 4 sums, 16, and each head's scores to their lanes, 4) plus one per key and head over 32/R (the
 *       score to its team). A call takes
 *       max(memory time, shuffle time); the code extraction, exps and multiply-adds are not modelled.</li>
 *   <li>Bytes per call: the pn-mix cache's element costs at long L (keys 2 bits average (half 3-bit, half 1-bit) plus
 *       {@value #KEY_METADATA_BYTES} B of metadata per channel and group of 128 tokens, values 2 bits + 4 B per 32
 *       channels; fp16 2 B an element), per KV head and token, keys and values.</li>
 * </ul>
 */
@Tag("pn-mix")
class DecodeRooflineModelTest {
    static final double LATENCY_CYCLES = 700;
    static final double CLOCK_GHZ = 1.98;
    static final int FP16_REGISTERS = 128;
    static final int PACKED_REGISTERS = 128;
    /** A channel's bit width, stream offset (4-byte ints) and fp16 scale/zero, per group of 128 tokens. */
    static final int KEY_METADATA_BYTES = 12;
    /** Packed values each team has in flight in fp32 (VALUE_KEYS in pnmix_decode.cu). */
    static final int VALUE_KEYS = 8;
    /** Tokens a lane scores at a time in a quantized group (SLICE in pnmix_decode.cu). */
    static final int SLICE = 4;
    static final double SHUFFLES_PER_CLOCK = 1;
    static final int SM_SHARED = 228 * 1024;
    static final int THREADS = CudaSplitKDecode.THREADS;

    record Gpu(String name, int sms, double peakBytesPerSecond) {
    }

    record Shape(String name, int queryHeads, int kvHeads, int headDim) {
    }

    record Row(String gpu, String shape, int tokens, String cache, int grid, double blocksPerSm, double inFlightKeysPerSm,
               double inFlightValuesPerSm, double neededPerSm, double fractionOfPeak, double microseconds, String bound) {
    }

    static final List<Gpu> GPUS = List.of(new Gpu("H200", 132, 4.8e12), new Gpu("H100-SXM", 132, 3.35e12));
    static final List<Shape> SHAPES = List.of(new Shape("layer-32q-8kv-128d", 32, 8, 128), new Shape("pn-mix-8q-2kv-32d", 8, 2, 32));
    static final int[] TOKENS = {4096, 32768, 131072};

    static List<Row> model() {
        List<Row> rows = new ArrayList<>();
        double latency = LATENCY_CYCLES / (CLOCK_GHZ * 1e9);
        for (Gpu g : GPUS) {
            for (Shape s : SHAPES) {
                int gq = s.queryHeads() / s.kvHeads();
                int d = s.headDim();
                int tile = CudaSplitKDecode.tileKeys(gq, d, 4);
                int smem = CudaSplitKDecode.sharedBytes(gq, d, tile, 4);
                int bySmem = SM_SHARED / (smem + 1024);
                int residentFp16 = Math.min(16, Math.min(bySmem, 65536 / (FP16_REGISTERS * THREADS)));
                int residentPacked = Math.min(16, Math.min(bySmem, 65536 / (PACKED_REGISTERS * THREADS)));
                int lanesPerKey = 1;
                while (8 * lanesPerKey < d && lanesPerKey < 32) {
                    lanesPerKey *= 2;
                }
                int keysPerWarp = 32 / lanesPerKey;
                int log2Lanes = Integer.numberOfTrailingZeros(lanesPerKey);
                int passes = (gq + CudaSplitKDecode.headsHeld(4) - 1) / CudaSplitKDecode.headsHeld(4);
                int warps = THREADS / 32;
                for (int L : TOKENS) {
                    int chunk = CudaSplitKDecode.automaticChunk(L, s.kvHeads(), tile, g.sms());
                    int grid = s.kvHeads() * ((L + chunk - 1) / chunk);
                    double perSm = Math.min(residentFp16, (double) grid / g.sms());
                    double perSmPacked = Math.min(residentPacked, (double) grid / g.sms());
                    double keyHeads = (double) L * s.kvHeads() * gq;   // (key, query head) pairs
                    double clock = CLOCK_GHZ * 1e9 * g.sms() * SHUFFLES_PER_CLOCK;
                    double elements = (double) L * s.kvHeads() * d;
                    double needed = g.peakBytesPerSecond() * latency / g.sms();
                    // fp16: a lane's 16 B of K and 16 B of V per key, all lanes busy.
                    double fp16InFlight = perSm * THREADS * 32.0;
                    double fp16Bytes = 2 * elements * 2;
                    double fp16Memory = phase(fp16Bytes * passes, fp16InFlight, g, latency);
                    double fp16Shuffles = keyHeads * log2Lanes / keysPerWarp / clock;
                    double fp16Time = Math.max(fp16Memory, fp16Shuffles);
                    rows.add(new Row(g.name(), s.name(), L, "fp16", grid, perSm, fp16InFlight, fp16InFlight, needed,
                            fp16Bytes / fp16Time / g.peakBytesPerSecond(), fp16Time * 1e6,
                            fp16Memory >= fp16Shuffles ? memoryBound(fp16InFlight, fp16InFlight, needed) : String.format(Locale.ROOT, "shuffles (HBM alone %.1f µs)", fp16Memory * 1e6)));
                    // packed keys: a lane a channel, its 16-byte code word and the next channel's 12 bytes of
                    // metadata (d/32 + 1 latencies for a lane's d/32 channels); values: VALUE_KEYS keys a team.
                    int lanesChannels = (d + 31) / 32;
                    double keyInFlight = perSmPacked * warps * 32.0 * (16 + KEY_METADATA_BYTES) * lanesChannels / (lanesChannels + 1);
                    double valueInFlight = perSmPacked * warps * VALUE_KEYS * keysPerWarp * (d * 2 / 8.0 + 4.0 * d / 32);
                    double keyBytes = elements * (0.25 + KEY_METADATA_BYTES / 128.0);
                    double valueBytes = elements * 0.375;
                    double packedMemory = phase(keyBytes * passes, keyInFlight, g, latency)
                            + phase(valueBytes * passes, valueInFlight, g, latency);
                    // Keys: one reduce-scatter of SLICE tokens × held heads (N values: N − 1 halving shuffles, then
                    // xor sums over the 5 − log2 N remaining offsets) and one shuffle a head to the tokens' lanes.
                    // (The kernel reduces and hands round all HB = headsHeld heads, whichever of them a pass holds.)
                    int hb = CudaSplitKDecode.headsHeld(4);
                    int values = hb * SLICE;
                    double slice = values - 1 + (5 - Integer.numberOfTrailingZeros(values)) + hb;
                    double packedShuffles = keyHeads * (slice / (Math.min(gq, hb) * SLICE) + 1.0 / keysPerWarp) / clock;
                    double packedTime = Math.max(packedMemory, packedShuffles);
                    rows.add(new Row(g.name(), s.name(), L, "packed", grid, perSmPacked, keyInFlight, valueInFlight, needed,
                            (keyBytes + valueBytes) / packedTime / g.peakBytesPerSecond(), packedTime * 1e6,
                            packedMemory >= packedShuffles ? memoryBound(keyInFlight, valueInFlight, needed)
                                    : String.format(Locale.ROOT, "shuffles (HBM alone %.1f µs)", packedMemory * 1e6)));
                }
            }
        }
        return rows;
    }

    /** What bounds a call whose memory time exceeds its shuffle time: the peak, or too few bytes in flight. */
    static String memoryBound(double keysInFlight, double valuesInFlight, double needed) {
        return Math.min(keysInFlight, valuesInFlight) >= needed ? "HBM" : "latency (bytes in flight)";
    }

    /** Seconds to move {@code bytes} with {@code inFlightPerSm} bytes in flight per SM, at most at peak. */
    static double phase(double bytes, double inFlightPerSm, Gpu g, double latency) {
        double rate = Math.min(g.peakBytesPerSecond(), inFlightPerSm * g.sms() / latency);
        return bytes / rate;
    }

    /** The model's kernel constants are the kernel's: a change to pnmix_decode.cu's defines fails here first. */
    @Test
    void theModelsConstantsAreTheKernelsDefines() throws java.io.IOException {
        String cu = java.nio.file.Files.readString(java.nio.file.Path.of("src/main/cuda/pnmix_decode.cu"));
        assertThat(cu).contains("#define VALUE_KEYS(T) (sizeof(T) == 4 ? " + VALUE_KEYS + " :")
                .containsPattern("#define SLICE " + SLICE + "\\b")
                .containsPattern("#define HEADS_F32 " + CudaSplitKDecode.headsHeld(4) + "\\b")
                .containsPattern("#define WARPS " + THREADS / 32 + "\\b");
    }

    @Test
    void printsTheModelTable() {
        List<Row> rows = model();
        System.out.println("MODEL, not a measurement (DecodeRooflineModelTest): HBM latency " + (int) LATENCY_CYCLES + " cycles at "
                + CLOCK_GHZ + " GHz, registers fp16 " + FP16_REGISTERS + " / packed " + PACKED_REGISTERS + ", 128 threads a block, fp32, "
                + (int) SHUFFLES_PER_CLOCK + " warp shuffle per clock per SM");
        System.out.println("| GPU | shape | tokens | cache | grid | blocks/SM | in flight/SM keys, values (KiB) | needed/SM (KiB) | modelled % of peak | modelled µs | bound by |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|");
        for (Row r : rows) {
            System.out.println(String.format(Locale.ROOT, "| %s | %s | %dk | %s | %d | %.1f | %.1f, %.1f | %.1f | %.0f%% | %.1f | %s |", r.gpu(), r.shape(),
                    r.tokens() / 1024, r.cache(), r.grid(), r.blocksPerSm(), r.inFlightKeysPerSm() / 1024, r.inFlightValuesPerSm() / 1024,
                    r.neededPerSm() / 1024, 100 * r.fractionOfPeak(), r.microseconds(), r.bound()));
        }
        for (int i = 0; i < rows.size(); i += 2) {
            Row fp16 = rows.get(i);
            Row packed = rows.get(i + 1);
            System.out.println(String.format(Locale.ROOT, "%s %s %dk: packed/fp16 time %.2f", fp16.gpu(), fp16.shape(), fp16.tokens() / 1024,
                    packed.microseconds() / fp16.microseconds()));
        }
        assertThat(rows).hasSize(GPUS.size() * SHAPES.size() * TOKENS.length * 2)
                .allSatisfy(r -> assertThat(r.fractionOfPeak()).isBetween(0.0, 1.0));
    }
}
