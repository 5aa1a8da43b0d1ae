package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.compute.DeviceProbe;

/**
 * {@code mechspec bench}: without a CUDA driver it refuses in one line; on the emulated driver it runs the whole bench
 * as a smoke test and labels its figures meaningless; on a GPU (the bundle's {@code --bench}) it measures.
 */
@Tag("cuda")
@Tag("cli")
class BenchCommandTest {
    @TempDir
    Path dir;

    @Test
    void benchRunsWhereThereIsADeviceAndRefusesInOneLineWhereThereIsNone() throws Exception {
        String missing = DeviceProbe.unavailableReason();
        if (missing != null) {
            Cli r = Cli.run("bench", "--out", dir.toString());
            assertThat(r.code()).as("%s", r).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(r.err().strip()).isEqualTo("mechspec: bench needs a CUDA device: " + missing);
            assertThat(dir).isEmptyDirectory();
            return;
        }
        boolean emulated = DeviceProbe.device().emulated();
        Cli r = Cli.run("bench", "--tokens", "300,1100", "--warmup", "1", "--rounds", "2", "--launches", "2", "--out", dir.toString());
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(r.out()).contains("packed/fp16").contains("layer-32q-8kv-128d").contains("pn-mix-8q-2kv-32d");
        Path file = dir.resolve("bench." + (emulated ? "cuda-emulated" : BenchCommand.slug(DeviceProbe.device().name())) + ".json");
        JsonNode j = new ObjectMapper().readTree(file.toFile());
        assertThat(j.has("meaningless")).isEqualTo(emulated);
        assertThat(r.out().contains("EMULATED: figures are meaningless")).isEqualTo(emulated);
        // Two shapes × two lengths × two caches, each with positive bytes and a finite time; a ratio per packed row.
        assertThat(j.get("results")).hasSize(8);
        for (JsonNode row : j.get("results")) {
            assertThat(row.get("bytes_per_call").asLong()).isGreaterThan(row.get("cache_bytes").asLong());
            assertThat(row.get("ms_per_call_median").asDouble()).isPositive().isFinite();
            assertThat(row.get("ms_per_call_min").asDouble()).isLessThanOrEqualTo(row.get("ms_per_call_median").asDouble());
        }
        assertThat(j.get("packed_over_fp16_time")).hasSize(4);
        assertThat(j.at("/device/peak_bandwidth_gb_s").asDouble()).isPositive();
        // The packed cache is the smaller one at every shape and length.
        for (int i = 0; i < 8; i += 2) {
            assertThat(j.get("results").get(i).get("cache").asText()).isEqualTo("packed");
            assertThat(j.get("results").get(i).get("cache_bytes").asLong())
                    .isLessThan(j.get("results").get(i + 1).get("cache_bytes").asLong());
        }
    }

    @Test
    void deviceNamesBecomeFileNames() {
        assertThat(BenchCommand.slug("NVIDIA H200")).isEqualTo("nvidia-h200");
        assertThat(BenchCommand.slug("NVIDIA GeForce RTX 4090 (Laptop)")).isEqualTo("nvidia-geforce-rtx-4090-laptop");
        assertThat(BenchCommand.slug("***")).isEqualTo("device");
    }
}
