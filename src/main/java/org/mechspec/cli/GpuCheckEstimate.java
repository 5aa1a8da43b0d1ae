package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Locale;

/**
 * How long gpu-check will take on a GPU, from its committed rehearsal on the emulated driver
 * ({@value GpuCheckCommand#BASIS}): each paper's process time there minus the time its kernels took on the emulator
 * (CUDA events, host clock) is host work a GPU runner repeats; on the GPU each launch is charged {@value #SECONDS_PER_LAUNCH}
 * s (a synchronous launch with its events, allocations and copies; small kernels take tens of µs) and each copied byte
 * {@value #COPY_BYTES_PER_SECOND} B/s (well under PCIe 4's 25 GB/s). The bench is charged {@value #BENCH_SECONDS} s: its
 * timed calls read about 0.4 TB, 2 s at 5% of an H100's 3.35 TB/s peak, and the rest is building 128k-token caches in
 * Java. Conservative on purpose: the budget, not the estimate, stops a run.
 */
record GpuCheckEstimate(boolean hasBasis, double hostSeconds, long launches, long bytesCopied, double benchSeconds) {
    static final double SECONDS_PER_LAUNCH = 5e-4;
    static final double COPY_BYTES_PER_SECOND = 5e9;
    static final double BENCH_SECONDS = 90;

    static GpuCheckEstimate of(JsonNode basis) {
        if (basis == null) {
            return new GpuCheckEstimate(false, 0, 0, 0, BENCH_SECONDS);
        }
        double host = 0;
        long launches = 0;
        long bytes = 0;
        for (JsonNode p : basis.path("papers")) {
            host += Math.max(0, p.path("process_seconds").asDouble() - p.path("device_ms").asDouble() / 1e3);
            launches += p.path("kernel_launches").asLong();
            bytes += p.path("bytes_to_device").asLong() + p.path("bytes_from_device").asLong();
        }
        return new GpuCheckEstimate(true, host, launches, bytes, BENCH_SECONDS);
    }

    double contractSeconds() {
        return hostSeconds + launches * SECONDS_PER_LAUNCH + bytesCopied / COPY_BYTES_PER_SECOND;
    }

    double seconds() {
        return contractSeconds() + benchSeconds;
    }

    String describe() {
        if (!hasBasis) {
            return String.format(Locale.ROOT, "unknown for the contracts (no %s beside the command), %.0f s for the bench",
                    GpuCheckCommand.BASIS, benchSeconds);
        }
        return String.format(Locale.ROOT, "%.1f min: contracts %.0f s (host work %.0f s from the emulated rehearsal, %,d launches"
                        + " at %.1f ms, %.1f MB copied at %.0f GB/s), bench %.0f s", seconds() / 60, contractSeconds(), hostSeconds,
                launches, SECONDS_PER_LAUNCH * 1e3, bytesCopied / 1e6, COPY_BYTES_PER_SECOND / 1e9, benchSeconds);
    }

    ObjectNode toJson(ObjectMapper json) {
        ObjectNode n = json.createObjectNode();
        if (hasBasis) {
            n.put("seconds", seconds());
        } else {
            n.putNull("seconds");
        }
        n.put("basis", hasBasis ? GpuCheckCommand.BASIS : "none");
        n.put("host_seconds", hostSeconds);
        n.put("kernel_launches", launches);
        n.put("bytes_copied", bytesCopied);
        n.put("seconds_per_launch", SECONDS_PER_LAUNCH);
        n.put("copy_bytes_per_second", COPY_BYTES_PER_SECOND);
        n.put("bench_seconds", benchSeconds);
        return n;
    }
}
