package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A MODEL, not a measurement: Little's-law estimate of the split-K decode kernels (pnmix_decode.cu) on an H200 and an
 * H100 SXM, for the bench's two shapes at 4k, 32k and 128k tokens. It prints the table README.md ("Decode benchmark",
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
 *   <li>Each tile's key phase and value phase are separated by barriers, so a phase's loads are in flight only
 *       while that phase runs; its time is its bytes over min(peak, resident blocks × bytes in flight per block ×
 *       SMs / latency), and the memory time the sum of the phases (the combine ignored).</li>
 *   <li>Shared memory: both caches are dequantized into a shared tile and every score and output reads its operands
 *       from shared memory (4-byte loads; q broadcast): 4 · gq · d bytes per key and operand pair, 2 pairs (q·k, p·v),
 *       at 128 B per clock per SM. A call takes max(memory time, shared-memory time) (blocks overlap the two).</li>
 *   <li>Bytes in flight per block: fp16 rows, 128 threads × min({@code ROWS_IN_FLIGHT} = 4, rows a thread reads in a
 *       tile) × 16 B; packed keys, min(d, 128) threads × 2 code words (the current and the prefetched one) × 16 B,
 *       counted as useful bytes; packed values, 128 threads × min(4, tokens a thread reads in a tile) × (a 4-byte
 *       code word + its 4-byte scale/zero), a word being 16 channels of 2-bit codes.</li>
 *   <li>Bytes per call: the pn-mix cache's element costs at long L (keys 2 bits average (half 3-bit, half 1-bit),
 *       values 2 bits + 4 B per 32 channels; fp16 2 B an element), per KV head and token, keys and values.</li>
 * </ul>
 */
@Tag("pn-mix")
class DecodeRooflineModelTest {
    static final double LATENCY_CYCLES = 700;
    static final double CLOCK_GHZ = 1.98;
    static final int FP16_REGISTERS = 72;
    static final int PACKED_REGISTERS = 96;
    static final double SHARED_BYTES_PER_CLOCK = 128;
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
                for (int L : TOKENS) {
                    int chunk = CudaSplitKDecode.automaticChunk(L, s.kvHeads(), tile, g.sms());
                    int grid = s.kvHeads() * ((L + chunk - 1) / chunk);
                    double perSm = Math.min(residentFp16, (double) grid / g.sms());
                    double perSmPacked = Math.min(residentPacked, (double) grid / g.sms());
                    double sharedTime = 2 * 4.0 * gq * d * L * s.kvHeads() / (SHARED_BYTES_PER_CLOCK * g.sms() * CLOCK_GHZ * 1e9);
                    double elements = (double) L * s.kvHeads() * d;
                    double needed = g.peakBytesPerSecond() * latency / g.sms();
                    // fp16: both phases read 16-byte row pieces, up to 4 per thread.
                    int vecLanes = Math.min(d / 8, THREADS);
                    int vecRows = THREADS / vecLanes;
                    int perThread = Math.min(4, (tile + vecRows - 1) / vecRows);
                    double fp16InFlight = perSm * THREADS * perThread * 16.0;
                    double fp16Bytes = 2 * elements * 2;
                    double fp16Memory = 2 * phase(elements * 2, fp16InFlight, g, latency);
                    double fp16Time = Math.max(sharedTime, fp16Memory);
                    rows.add(new Row(g.name(), s.name(), L, "fp16", grid, perSm, fp16InFlight, fp16InFlight, needed,
                            fp16Bytes / fp16Time / g.peakBytesPerSecond(), fp16Time * 1e6,
                            fp16Memory >= sharedTime ? "HBM" : "shared memory"));
                    // packed: keys from 16-byte code words, values element by element.
                    double keyInFlight = perSmPacked * Math.min(d, THREADS) * 2 * 16.0;
                    int wordRows = THREADS / (d / 16);
                    double valueInFlight = perSmPacked * THREADS * Math.min(4, (tile + wordRows - 1) / wordRows) * 8.0;
                    double keyBytes = elements * 0.25;
                    double valueBytes = elements * 0.375;
                    double packedMemory = phase(keyBytes, keyInFlight, g, latency) + phase(valueBytes, valueInFlight, g, latency);
                    double packedTime = Math.max(sharedTime, packedMemory);
                    rows.add(new Row(g.name(), s.name(), L, "packed", grid, perSm, keyInFlight, valueInFlight, needed,
                            (keyBytes + valueBytes) / packedTime / g.peakBytesPerSecond(), packedTime * 1e6,
                            packedMemory >= sharedTime ? "HBM" : String.format(Locale.ROOT, "shared memory (HBM alone %.1f µs)", packedMemory * 1e6)));
                }
            }
        }
        return rows;
    }

    /** Seconds to move {@code bytes} with {@code inFlightPerSm} bytes in flight per SM, at most at peak. */
    static double phase(double bytes, double inFlightPerSm, Gpu g, double latency) {
        double rate = Math.min(g.peakBytesPerSecond(), inFlightPerSm * g.sms() / latency);
        return bytes / rate;
    }

    @Test
    void printsTheModelTable() {
        List<Row> rows = model();
        System.out.println("MODEL, not a measurement (DecodeRooflineModelTest): HBM latency " + (int) LATENCY_CYCLES + " cycles at "
                + CLOCK_GHZ + " GHz, registers fp16 " + FP16_REGISTERS + " / packed " + PACKED_REGISTERS + ", 128 threads a block, fp32");
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
