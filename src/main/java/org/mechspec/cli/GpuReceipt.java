package org.mechspec.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.DeviceProbe;
import org.mechspec.data.DataFiles;
import org.mechspec.report.AtomicFiles;
import org.mechspec.report.SourceFingerprints;

/**
 * The evidence a run on a real GPU leaves: {@code DIR/gpu-receipt.json} with the commit, the device, driver, nvcc
 * and the SHA-256 of every kernel image that was loaded, the contract counts, and the SHA-256 of each CUDA artifact
 * written. A run on the emulated driver, or without a GPU, writes none.
 */
final class GpuReceipt {
    static final String FILE = "gpu-receipt.json";

    private GpuReceipt() {
    }

    /** Writes the receipt when a real GPU ran the contracts; returns the file, or null. */
    static Path write(Path out, String backend, long passed, long failed, long skipped) throws IOException {
        if (backend.equals("cpu") || DeviceProbe.unavailableReason() != null || DeviceProbe.device().emulated()) {
            return null;
        }
        CudaBackend cuda = CudaBackend.get();
        ObjectMapper json = new ObjectMapper();
        ObjectNode r = json.createObjectNode();
        r.put("receipt", "mechspec contracts on a GPU");
        r.put("commit", SourceFingerprints.recorded().commit());
        r.put("finished_utc", Instant.now().toString());
        r.put("device", cuda.device());
        ObjectNode provenance = json.valueToTree(cuda.provenance());
        r.set("device_provenance", provenance);
        ObjectNode counts = r.putObject("contracts");
        counts.put("passed", passed);
        counts.put("failed", failed);
        counts.put("skipped", skipped);
        ObjectNode artifacts = r.putObject("artifacts_sha256");
        Path reports = out.resolve("reports");
        if (Files.isDirectory(reports)) {
            List<Path> files;
            try (Stream<Path> list = Files.list(reports)) {
                files = list.filter(p -> p.getFileName().toString().endsWith(".cuda.json")).sorted().toList();
            }
            for (Path f : files) {
                artifacts.put(f.getFileName().toString(), DataFiles.sha256(Files.readAllBytes(f)));
                // The images each paper's process loaded (a per-paper run loads none in this one).
                com.fasterxml.jackson.databind.JsonNode images = json.readTree(f.toFile()).path("mechspec").path("device_provenance").path("images");
                if (images.isObject()) {
                    provenance.withObject("/images").setAll((ObjectNode) images);
                }
            }
        }
        Path file = out.resolve(FILE);
        AtomicFiles.write(file, json.writerWithDefaultPrettyPrinter().writeValueAsString(r) + "\n");
        return file;
    }
}
