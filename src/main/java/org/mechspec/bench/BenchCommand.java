package org.mechspec.bench;

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
import org.mechspec.cli.ExitCodes;
import org.mechspec.cli.InputException;
import org.mechspec.cli.PaperCommand;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.DeviceProbe;
import org.mechspec.compute.MigState;
import org.mechspec.pnmix.CudaSplitKDecode;
import org.mechspec.pnmix.DecodeBench;
import org.mechspec.pnmix.PackedCacheOps;
import org.mechspec.pnmix.WorkingSet;
import org.mechspec.report.AtomicFiles;
import org.mechspec.report.OutputFolder;
import org.mechspec.report.SourceFingerprints;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code mechspec bench}: pn-mix's decode benchmark, the split-K kernels on a GPU, or an outside implementation's
 * {@code pnmix.decode} judged as a timed claim ({@link ImplementationBench}). A tool above the papers: it reads
 * pn-mix's kernels (which stay free of the command, their executed sources unchanged) and reaches the command as a
 * {@link PaperCommand}.
 */
@Command(name = "bench", mixinStandardHelpOptions = true, header = "Time split-K decode over packed and fp16 caches on the GPU.", description = {
    "Time one fp32 decode step of the split-K kernels over the pn-mix packed cache",
    "and over an fp16 cache of the same tokens, for a 32q/8kv x128 layer and the",
    "pn-mix protocol's shape, with CUDA events around back-to-back launches after",
    "warm-up. Each cache is held in enough device copies to fill twice the L2 and",
    "the calls take them in turn, so every timed call reads DRAM. Reports the L2",
    "size, SM count and MIG state, the splits, the bytes per call (raw and in the",
    "32-byte sectors the kernels touch), GB/s from the sectors, the fraction of the",
    "peak bandwidth (memory clock x bus width x 2; withheld on a MIG slice or when",
    "that cannot be told) and the packed/fp16 time ratio; writes",
    "OUT/bench.<device>.json and prints one table. On the emulated driver it is a",
    "smoke test (1024 tokens, one call) and its figures are labelled meaningless.",
    "With --implementation CMD, times an outside implementation's pnmix.decode",
    "(f32) from mechspec's side instead, on the CPU: fresh queries, every output",
    "judged against mechspec's decode, a bit-identical replay, and a floor of the",
    "cache's bytes at the copy bandwidth measured in the same run; writes",
    "OUT/bench.<id>.json; exit 1 when a call was wrong, irreproducible or faster",
    "than reading its cache.",
    "Exit 0 done, 1 findings (--implementation), 2 no CUDA device or bad options."})
public final class BenchCommand implements Callable<Integer>, PaperCommand {
    /** What the first GPU run is measured against (src/site/markdown/gpu.md, "Decode benchmark"). */
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

    @Option(names = "--implementation", paramLabel = "CMD", description = {"time an outside implementation's pnmix.decode (f32) instead, from mechspec's side (PROTOCOL.md): fresh queries, every output judged, a replay, the physics floor; no GPU needed"})
    String implementation;

    @Option(names = "--calls", paramLabel = "N", description = "with --implementation: timed calls per cache (default 9)")
    Integer calls;

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
        if (implementation != null) {
            return implementationBench(stdout);
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
        Device device = Device.of(cuda);
        // The copy rate first, on the same device in the same run: the yardstick every call's GB/s is read against.
        DecodeBench.CopyRate copy = DecodeBench.copyRate(cuda, emulated ? 1 << 20 : 256L << 20, r, emulated ? 1 : 20);

        List<DecodeBench.Timing> timings = new ArrayList<>();
        for (DecodeBench.Shape shape : DecodeBench.SHAPES) {
            for (int n : lengths) {
                timings.addAll(DecodeBench.time(cuda, shape, n, w, r, l));
            }
        }
        ObjectNode report = report(cuda, device, copy, timings, w, r, l);
        String name = emulated ? "cuda-emulated" : slug(cuda.device());
        try {
            OutputFolder.create(out);
        } catch (IOException e) {
            throw InputException.cannotWrite(out, e);
        }
        Path file = out.resolve("bench." + name + ".json");
        AtomicFiles.write(file, new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(report) + "\n");
        printTable(stdout, cuda, device, copy, timings, emulated);
        stdout.println("wrote " + file);
        return ExitCodes.OK;
    }

    /**
     * {@code --implementation}: the worker's decode at the pn-mix protocol's shape ({@link ImplementationBench}); writes
     * OUT/bench.&lt;id&gt;.json; exit 1 when a cache's calls were wrong, not reproducible, faster than reading the cache,
     * or the packed speedup beat the byte ratio.
     */
    private Integer implementationBench(PrintWriter stdout) throws IOException {
        List<Integer> lengths = tokens != null ? tokens : List.of(4096, 32768);
        for (int n : lengths) {
            positive("--tokens", n, 1);
        }
        int n = positive("--calls", calls, 9);
        String before = System.getProperty(org.mechspec.worker.Implementation.PROPERTY);
        System.setProperty(org.mechspec.worker.Implementation.PROPERTY, implementation);
        try {
            org.mechspec.worker.Implementation impl;
            try {
                impl = org.mechspec.worker.Implementation.current();
            } catch (RuntimeException e) {
                throw new InputException("the implementation did not start: " + e.getMessage());
            }
            if (!impl.serves("pnmix.decode", "f32")) {
                throw new InputException("implementation " + impl.id() + " does not serve pnmix.decode (f32): nothing of it to time");
            }
            PackedCacheOps ops = PackedCacheOps.forBackend(new org.mechspec.worker.WorkerBackend(impl));
            DecodeBench.Shape shape = DecodeBench.SHAPES.get(1);
            double copy = ImplementationBench.copyBandwidth();
            List<ImplementationBench.Result> results = new ArrayList<>();
            for (int length : lengths) {
                results.addAll(ImplementationBench.time(ops, shape, length, n, copy));
            }
            ObjectMapper json = new ObjectMapper();
            ObjectNode o = json.createObjectNode();
            o.put("bench", "an implementation's pnmix.decode (f32), timed from mechspec's side");
            o.put("implementation", impl.id());
            o.put("command", implementation);
            o.put("commit", SourceFingerprints.recorded().commit());
            o.put("finished_utc", Instant.now().toString());
            o.put("shape", shape.name());
            o.put("protocol", "per cache: one untimed call, then " + n + " timed calls, each on a fresh fp16 query, timed with the JVM's monotonic clock around the whole call (transport included: what a caller pays); every output judged against mechspec's fp64 CPU decode under the FlashAttention rule (naive reference: mechspec's fp32 CPU decode); the untimed call's query replayed last, its output required bit-identical; the floor: cache bytes / the copy bandwidth measured in this run; the packed cache's speedup over the fp16 cache of the same tokens against the byte ratio, its ceiling for a decode bound by memory (past it: a note, not a fault)");
            putNumber(o, "copy_bandwidth_gb_s", copy / 1e9);
            ArrayNode rows = o.putArray("results");
            List<String> findings = new ArrayList<>();
            for (ImplementationBench.Result r : results) {
                ObjectNode row = rows.addObject();
                row.put("cache", r.cache());
                row.put("tokens", r.tokens());
                row.put("cache_bytes", r.cacheBytes());
                row.put("calls", r.calls());
                row.put("ms_per_call_median", r.medianMs());
                row.put("ms_per_call_min", r.minMs());
                row.put("ms_per_call_max", r.maxMs());
                row.put("floor_ms", r.floorMs());
                row.put("below_floor", r.belowFloor());
                putNumber(row, "worst_error_over_bound", r.worstErrorOverBound());
                row.put("all_outputs_correct", r.allCorrect());
                row.put("replay_bit_identical", r.replayIdentical());
                if (r.fault() != null) {
                    findings.add(r.cache() + " cache, " + r.tokens() + " tokens: " + r.fault());
                }
            }
            ArrayNode ratios = o.putArray("packed_speedup");
            // Beyond the byte ratio is a note, not a fault: the ratio bounds a decode bound by memory, and a right one
            // that is not (NumPy's at a few hundred tokens, per-call costs that grow with the fp16 cache's size) may
            // pass it. Wrong outputs, a replay that differs and a call below the floor are the faults.
            List<String> notes = new ArrayList<>();
            for (int i = 0; i + 1 < results.size(); i += 2) {
                ImplementationBench.Result p = results.get(i);
                ImplementationBench.Result f = results.get(i + 1);
                double speedup = f.medianMs() / p.medianMs();
                double ceiling = (double) f.cacheBytes() / p.cacheBytes();
                ObjectNode row = ratios.addObject();
                row.put("tokens", p.tokens());
                putNumber(row, "fp16_over_packed_time", speedup);
                putNumber(row, "byte_ratio_ceiling", ceiling);
                row.put("within_ceiling", speedup <= ceiling);
                if (speedup > ceiling) {
                    notes.add(String.format(Locale.ROOT, "%d tokens: packed decode %.2fx faster than fp16, beyond the byte ratio %.2fx: "
                            + "this fp16 decode is not bound by memory here", p.tokens(), speedup, ceiling));
                }
            }
            ArrayNode f = o.putArray("findings");
            findings.forEach(f::add);
            try {
                OutputFolder.create(out);
            } catch (IOException e) {
                throw InputException.cannotWrite(out, e);
            }
            Path file = out.resolve("bench." + impl.id() + ".json");
            AtomicFiles.write(file, json.enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(o) + "\n");
            stdout.printf(Locale.ROOT, "%s: pnmix.decode (f32), %s, copy bandwidth %.1f GB/s%n", impl.id(), shape.name(), copy / 1e9);
            stdout.printf(Locale.ROOT, "%-7s %7s %10s %10s %10s %10s %s%n", "cache", "tokens", "bytes", "ms/call", "floor ms", "err/bound", "verdict");
            for (ImplementationBench.Result r : results) {
                stdout.printf(Locale.ROOT, "%-7s %7d %10d %10.3f %10.4f %10.3g %s%n", r.cache(), r.tokens(), r.cacheBytes(), r.medianMs(), r.floorMs(),
                        r.worstErrorOverBound(), r.held() ? "held" : "FAILED: " + r.fault());
            }
            notes.forEach(x -> stdout.println("note: " + x));
            findings.forEach(x -> stdout.println("finding: " + x));
            stdout.println("wrote " + file);
            return findings.isEmpty() ? ExitCodes.OK : ExitCodes.FINDINGS;
        } finally {
            org.mechspec.worker.Implementation.closeCurrent();
            if (before == null) {
                System.clearProperty(org.mechspec.worker.Implementation.PROPERTY);
            } else {
                System.setProperty(org.mechspec.worker.Implementation.PROPERTY, before);
            }
        }
    }

    /**
     * What the bench records about the device: SMs and L2 (which size the splits and the working set), MIG state and
     * the clock × bus-width peak, with the reason when no fraction of it is reported ({@code peakWithheld}).
     */
    record Device(int multiprocessors, int l2Bytes, MigState mig, double peak, String peakWithheld) {
        static Device of(CudaBackend cuda) {
            MigState mig = MigState.of(cuda.device(), System.getenv("CUDA_VISIBLE_DEVICES"), cuda.info().emulated());
            double peak = cuda.peakMemoryBandwidth();
            String withheld = mig.peakWithheld();
            if (withheld == null && !Double.isFinite(peak)) {
                withheld = "the driver reports no memory clock or bus width";
            }
            return new Device(cuda.attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
                    cuda.attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE), mig, peak, withheld);
        }

        /** The fraction of peak a GB/s figure is, or NaN (reported as null) when it is withheld. */
        double fractionOfPeak(double gbPerSecond) {
            return peakWithheld == null ? gbPerSecond * 1e9 / peak : Double.NaN;
        }
    }

    private static ObjectNode report(CudaBackend cuda, Device device, DecodeBench.CopyRate copy, List<DecodeBench.Timing> timings,
                                     int warmup, int rounds, int launches) {
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
        dev.put("multiprocessor_count", device.multiprocessors());
        dev.put("l2_cache_bytes", device.l2Bytes());
        ObjectNode mig = dev.putObject("mig");
        mig.put("state", device.mig().state());
        mig.put("evidence", device.mig().evidence());
        dev.put("memory_clock_khz", cuda.attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE));
        dev.put("bus_width_bits", cuda.attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH));
        putNumber(dev, "peak_bandwidth_gb_s", device.peak() / 1e9);
        if (device.peakWithheld() != null) {
            dev.put("fraction_of_peak_withheld", device.peakWithheld());
        }
        ObjectNode copyRate = dev.putObject("copy_rate");
        copyRate.put("buffer_bytes", copy.bufferBytes());
        copyRate.put("copies_per_round", copy.copies());
        copyRate.put("rounds", copy.rounds());
        putNumber(copyRate, "median_gb_s", copy.medianBytesPerSecond() / 1e9);
        putNumber(copyRate, "max_gb_s", copy.maxBytesPerSecond() / 1e9);
        ObjectNode protocol = o.putObject("protocol");
        protocol.put("arithmetic", "fp32 (fp16 cache values, fp32 query)");
        protocol.put("timer", "CUDA events on the default stream around each batch of back-to-back calls (one launch a call: the chunk kernel, whose last block per KV head merges); ms per call = batch time / calls; median and least over the rounds");
        protocol.put("copy_rate", "device-to-device copies (cuMemcpyDtoDAsync) of a buffer of max(2 x L2, 256 MiB) bytes, back to back between CUDA events, before the decode timings in the same run; read plus written bytes per second, median and most over the rounds; fraction_of_copy_rate = a call's GB/s (sector bytes) / the median copy rate");
        protocol.put("host_enqueue", "the host's wall time to enqueue a batch (the launch of every call, arguments prepared once per cache), per call, median over the rounds; host_bound when it is at least half the device time per call, where the events may have timed the host feeding the stream rather than the kernels");
        protocol.put("warmup_calls", warmup);
        protocol.put("rounds", rounds);
        protocol.put("calls_per_round", launches);
        protocol.put("working_set", "each cache is uploaded in copies = max(1, ceil(" + WorkingSet.L2_MULTIPLE
                + " x L2 bytes / device bytes of one copy)) (one copy when the L2 size is unknown); call i reads copy i mod copies, warm-up included, so no timed call finds its cache in L2");
        protocol.put("splits", "chunk-kernel blocks = KV heads x chunks; chunks per KV head = ceil(" + CudaSplitKDecode.BLOCKS_PER_SM
                + " x SMs / KV heads), each chunk a whole number of tiles and at least " + CudaSplitKDecode.MIN_TILES_PER_SPLIT
                + " (so fewer, longer chunks for a short cache)");
        protocol.put("bytes_per_call", "raw: each byte the kernel reads or writes, once (cache codes, scales and zeros, bit widths, offsets, dims, fp16 sink and residual; the query; the split-K partials written and read back; the output; the per-KV-head counters, read and written). sectors: per device buffer, the distinct 32-byte sectors the kernel's access pattern touches (each KV head's channels of every row, strided metadata included), 32 bytes each; GB/s and the fraction of peak come from the sector bytes");
        protocol.put("peak", "memory clock (kHz) x 1000 x bus width (bits) / 8 x 2 (double data rate), from cuDeviceGetAttribute; no fraction of it on a MIG slice or when that cannot be told");
        ArrayNode rows = o.putArray("results");
        for (DecodeBench.Timing t : timings) {
            CudaSplitKDecode.Launch launch = t.launch();
            ObjectNode row = rows.addObject();
            row.put("shape", t.shape().name());
            row.put("query_heads", t.shape().queryHeads());
            row.put("kv_heads", t.shape().kvHeads());
            row.put("head_dim", t.shape().headDim());
            row.put("tokens", t.tokens());
            row.put("cache", t.cache());
            row.put("cache_bytes", t.cacheBytes());
            row.put("copy_device_bytes", launch.cacheDeviceBytes());
            row.put("copies", t.workingSet().copies());
            row.put("working_set_bytes", t.workingSet().bytes());
            row.put("working_set_covers_twice_l2", t.workingSet().coversL2());
            row.put("splits", launch.splits());
            row.put("longest_chunk_keys", launch.longestChunkKeys());
            row.put("tile_keys", launch.tileKeys());
            row.put("bytes_per_call_raw", launch.rawBytesPerCall());
            row.put("bytes_per_call_sectors", launch.sectorBytesPerCall());
            row.put("ms_per_call_median", t.medianMs());
            row.put("ms_per_call_min", t.minMs());
            row.put("host_enqueue_ms_per_call_median", t.hostEnqueueMs());
            row.put("host_bound", t.hostBound());
            putNumber(row, "gb_per_s", gbPerSecond(t));
            putNumber(row, "fraction_of_peak", device.fractionOfPeak(gbPerSecond(t)));
            putNumber(row, "fraction_of_copy_rate", gbPerSecond(t) * 1e9 / copy.medianBytesPerSecond());
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

    private static void printTable(PrintWriter out, CudaBackend cuda, Device device, DecodeBench.CopyRate copy,
                                   List<DecodeBench.Timing> timings, boolean emulated) {
        out.printf(Locale.ROOT, "%s (driver %s, cc %s), %d SMs, L2 %.1f MiB, MIG %s, peak %.0f GB/s, copy rate %.0f GB/s (measured, median)%s%n",
                cuda.device(), cuda.info().driverRelease(), cuda.info().computeCapability(), device.multiprocessors(),
                device.l2Bytes() / 1048576.0, device.mig().state(), device.peak() / 1e9, copy.medianBytesPerSecond() / 1e9,
                emulated ? " -- EMULATED: figures are meaningless" : "");
        if (device.peakWithheld() != null) {
            out.println("no fraction of peak: " + device.peakWithheld());
        }
        out.printf(Locale.ROOT, "%-20s %7s %-6s %6s %9s %6s %12s %12s %10s %10s %9s %8s %8s %11s%n", "shape", "tokens", "cache", "copies",
                "set MiB", "splits", "sector B", "raw B", "ms/call", "host ms", "GB/s", "of peak", "of copy", "packed/fp16");
        for (DecodeBench.Timing t : timings) {
            DecodeBench.Timing f = fp16Of(timings, t);
            double fraction = device.fractionOfPeak(gbPerSecond(t));
            out.printf(Locale.ROOT, "%-20s %7d %-6s %6d %9.1f %6d %12d %12d %10.4f %10s %9.1f %8s %7.1f%% %11s%n", t.shape().name(), t.tokens(),
                    t.cache(), t.workingSet().copies(), t.workingSet().bytes() / 1048576.0, t.launch().splits(),
                    t.launch().sectorBytesPerCall(), t.launch().rawBytesPerCall(), t.medianMs(),
                    String.format(Locale.ROOT, "%.4f%s", t.hostEnqueueMs(), t.hostBound() ? "!" : ""), gbPerSecond(t),
                    Double.isFinite(fraction) ? String.format(Locale.ROOT, "%.1f%%", 100 * fraction) : "n/a",
                    100 * gbPerSecond(t) * 1e9 / copy.medianBytesPerSecond(), f == null ? "" : String.format(Locale.ROOT, "%.3f", t.medianMs() / f.medianMs()));
        }
        if (timings.stream().anyMatch(DecodeBench.Timing::hostBound)) {
            out.println("host ms marked !: the host took at least half a call's device time to enqueue it, so that device time may be the host's");
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

    /** GB/s of the sector bytes a call moves, at the median time. */
    private static double gbPerSecond(DecodeBench.Timing t) {
        return t.launch().sectorBytesPerCall() / (t.medianMs() * 1e-3) / 1e9;
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
    public static String slug(String device) {
        String s = device.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-|-$", "");
        return s.isEmpty() ? "device" : s;
    }
}
