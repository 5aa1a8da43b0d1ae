package org.mechspec.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import jcuda.driver.CUdevice_attribute;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.DeviceProbe;
import org.mechspec.pnmix.DecodeBench;
import org.mechspec.report.AtomicFiles;
import org.mechspec.report.OutputFolder;
import org.mechspec.report.SourceFingerprints;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

@Command(name = "bench", mixinStandardHelpOptions = true, header = "Time split-K decode over packed and fp16 caches on the GPU.", description = {
    "Time one fp32 decode step of the split-K kernels over the pn-mix packed cache",
    "and over an fp16 cache of the same tokens, for a 32q/8kv x128 layer and the",
    "pn-mix protocol's shape, with CUDA events around back-to-back launches after",
    "warm-up. Reports bytes read per call, GB/s, the device's peak bandwidth",
    "(memory clock x bus width x 2), the fraction of peak and the packed/fp16 time",
    "ratio; writes OUT/bench.<device>.json and prints one table. On the emulated",
    "driver it is a smoke test (1024 tokens, one call) and its figures are",
    "labelled meaningless. Exit 0 done, 2 no CUDA device or bad options."})
final class BenchCommand implements Callable<Integer> {
    /** What the first GPU run is measured against (README, "Decode benchmark"). */
    static final double TARGET_FRACTION_OF_PEAK = 0.70;
    static final double TARGET_SPEEDUP_AT_32K = 2.5;

    @Option(names = "--tokens", split = ",", paramLabel = "N", description = "cache lengths (default 4096,32768,131072; emulated: 1024)")
    List<Integer> tokens;

    @Option(names = "--warmup", paramLabel = "N", description = "untimed calls per cache first (default 3; emulated: 1)")
    Integer warmup;

    @Option(names = "--rounds", paramLabel = "N", description = "timed batches per cache; the median is reported (default 7; emulated: 1)")
    Integer rounds;

    @Option(names = "--launches", paramLabel = "N", description = "calls per timed batch (default 50; emulated: 1)")
    Integer launches;

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "mechspec-out",
            description = "where bench.<device>.json goes, never the committed reports/ (default: ${DEFAULT-VALUE})")
    Path out;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws IOException {
        PrintWriter stdout = spec.commandLine().getOut();
        String refused = OutputFolder.refusal("--out", out);
        if (refused != null) {
            throw new InputException(refused);
        }
        String missing = DeviceProbe.unavailableReason();
        if (missing != null) {
            throw new InputException("bench needs a CUDA device: " + missing);
        }
        CudaBackend cuda = CudaBackend.get();
        boolean emulated = cuda.info().emulated();
        List<Integer> lengths = tokens != null ? tokens : emulated ? List.of(1024) : List.of(4096, 32768, 131072);
        int w = positive("--warmup", warmup, emulated ? 1 : 3);
        int r = positive("--rounds", rounds, emulated ? 1 : 7);
        int l = positive("--launches", launches, emulated ? 1 : 50);
        for (int n : lengths) {
            positive("--tokens", n, 1);
        }
        double peak = cuda.peakMemoryBandwidth();

        List<DecodeBench.Timing> timings = new ArrayList<>();
        for (DecodeBench.Shape shape : DecodeBench.SHAPES) {
            for (int n : lengths) {
                timings.addAll(DecodeBench.time(cuda, shape, n, w, r, l));
            }
        }
        ObjectNode report = report(cuda, timings, peak, w, r, l);
        String device = emulated ? "cuda-emulated" : slug(cuda.device());
        try {
            OutputFolder.create(out);
        } catch (IOException e) {
            throw InputException.cannotWrite(out, e);
        }
        Path file = out.resolve("bench." + device + ".json");
        AtomicFiles.write(file, new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report) + "\n");
        printTable(stdout, cuda, timings, peak, emulated);
        stdout.println("wrote " + file);
        return ExitCodes.OK;
    }

    private static ObjectNode report(CudaBackend cuda, List<DecodeBench.Timing> timings, double peak, int warmup, int rounds,
                                     int launches) {
        ObjectMapper json = new ObjectMapper();
        ObjectNode o = json.createObjectNode();
        o.put("bench", "mechspec split-K decode, packed vs fp16 cache");
        o.put("commit", SourceFingerprints.recorded().commit());
        o.put("finished_utc", Instant.now().toString());
        if (cuda.info().emulated()) {
            o.put("meaningless", "emulated driver: a CPU runs the kernels and events read the host clock; a smoke test of the bench, not a measurement");
        }
        ObjectNode dev = o.putObject("device");
        dev.put("name", cuda.device());
        dev.put("driver_cuda_version", cuda.info().driverRelease());
        dev.put("compute_capability", cuda.info().computeCapability());
        dev.put("emulated", cuda.info().emulated());
        dev.put("memory_clock_khz", cuda.attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE));
        dev.put("bus_width_bits", cuda.attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH));
        putNumber(dev, "peak_bandwidth_gb_s", peak / 1e9);
        ObjectNode protocol = o.putObject("protocol");
        protocol.put("arithmetic", "fp32 (fp16 cache values, fp32 query)");
        protocol.put("timer", "CUDA events on the default stream around each batch of back-to-back calls (chunk kernel + combine kernel); ms per call = batch time / calls; median and least over the rounds");
        protocol.put("warmup_calls", warmup);
        protocol.put("rounds", rounds);
        protocol.put("calls_per_round", launches);
        protocol.put("bytes_per_call", "every cache byte once (codes, fp16 scales and zeros, sink and residual; plus the key channels' bit widths and offsets), the query, the split-K partials written and read, the output");
        protocol.put("peak", "memory clock (kHz) x 1000 x bus width (bits) / 8 x 2 (double data rate), from cuDeviceGetAttribute");
        ArrayNode rows = o.putArray("results");
        for (DecodeBench.Timing t : timings) {
            ObjectNode row = rows.addObject();
            row.put("shape", t.shape().name());
            row.put("query_heads", t.shape().queryHeads());
            row.put("kv_heads", t.shape().kvHeads());
            row.put("head_dim", t.shape().headDim());
            row.put("tokens", t.tokens());
            row.put("cache", t.cache());
            row.put("cache_bytes", t.cacheBytes());
            row.put("bytes_per_call", t.bytesPerCall());
            row.put("chunk_keys", t.chunkKeys());
            row.put("tile_keys", t.tileKeys());
            row.put("ms_per_call_median", t.medianMs());
            row.put("ms_per_call_min", t.minMs());
            putNumber(row, "gb_per_s", gbPerSecond(t));
            putNumber(row, "fraction_of_peak", gbPerSecond(t) * 1e9 / peak);
        }
        ArrayNode ratios = o.putArray("packed_over_fp16_time");
        for (DecodeBench.Timing p : timings) {
            DecodeBench.Timing f = fp16Of(timings, p);
            if (f != null) {
                ObjectNode row = ratios.addObject();
                row.put("shape", p.shape().name());
                row.put("tokens", p.tokens());
                putNumber(row, "ratio", p.medianMs() / f.medianMs());
            }
        }
        ObjectNode targets = o.putObject("targets");
        targets.put("fraction_of_peak_at_32k_and_above", TARGET_FRACTION_OF_PEAK);
        targets.put("fp16_over_packed_time_at_32k", TARGET_SPEEDUP_AT_32K);
        return o;
    }

    private static void printTable(PrintWriter out, CudaBackend cuda, List<DecodeBench.Timing> timings, double peak, boolean emulated) {
        out.printf(Locale.ROOT, "%s (driver %s, cc %s), peak %.0f GB/s%s%n", cuda.device(), cuda.info().driverRelease(),
                cuda.info().computeCapability(), peak / 1e9, emulated ? " -- EMULATED: figures are meaningless" : "");
        out.printf(Locale.ROOT, "%-20s %8s %-6s %12s %10s %9s %8s %13s%n", "shape", "tokens", "cache", "bytes/call", "ms/call",
                "GB/s", "of peak", "packed/fp16");
        for (DecodeBench.Timing t : timings) {
            DecodeBench.Timing f = fp16Of(timings, t);
            out.printf(Locale.ROOT, "%-20s %8d %-6s %12d %10.4f %9.1f %7.1f%% %13s%n", t.shape().name(), t.tokens(), t.cache(),
                    t.bytesPerCall(), t.medianMs(), gbPerSecond(t), 100 * gbPerSecond(t) * 1e9 / peak,
                    f == null ? "" : String.format(Locale.ROOT, "%.3f", t.medianMs() / f.medianMs()));
        }
    }

    /** The fp16 timing at the same shape and length as a packed one (null for an fp16 timing). */
    private static DecodeBench.Timing fp16Of(List<DecodeBench.Timing> timings, DecodeBench.Timing packed) {
        if (!packed.cache().equals("packed")) {
            return null;
        }
        return timings.stream().filter(t -> t.cache().equals("fp16") && t.shape().equals(packed.shape()) && t.tokens() == packed.tokens())
                .findFirst().orElse(null);
    }

    private static double gbPerSecond(DecodeBench.Timing t) {
        return t.bytesPerCall() / (t.medianMs() * 1e-3) / 1e9;
    }

    /** JSON has no NaN or infinity: an unknown figure (no peak, a zero time) is null. */
    private static void putNumber(ObjectNode o, String name, double v) {
        if (Double.isFinite(v)) {
            o.put(name, v);
        } else {
            o.putNull(name);
        }
    }

    private static int positive(String option, Integer given, int fallback) {
        int v = given != null ? given : fallback;
        if (v <= 0) {
            throw new InputException(option + " must be positive, got " + v);
        }
        return v;
    }

    /** "NVIDIA H200" → "nvidia-h200". */
    static String slug(String device) {
        String s = device.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
        return s.isEmpty() ? "device" : s;
    }
}
