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
        Path file = dir.resolve("bench." + (emulated ? "cuda-emulated" : org.mechspec.bench.BenchCommand.slug(DeviceProbe.device().name())) + ".json");
        JsonNode j = new ObjectMapper().readTree(file.toFile());
        assertThat(j.has("meaningless")).isEqualTo(emulated);
        assertThat(r.out().contains("EMULATED: figures are meaningless")).isEqualTo(emulated);
        JsonNode device = j.get("device");
        long l2 = device.get("l2_cache_bytes").asLong();
        int sms = device.get("multiprocessor_count").asInt();
        assertThat(l2).isPositive();
        assertThat(sms).isPositive();
        assertThat(device.at("/mig/state").asText()).isIn("yes", "no", "unknown");
        assertThat(r.out()).contains(sms + " SMs", "MIG " + device.at("/mig/state").asText());
        // A fraction of the clock × bus-width peak only on a whole GPU; otherwise null, with the reason.
        boolean withheld = !device.at("/mig/state").asText().equals("no");
        assertThat(device.has("fraction_of_peak_withheld")).isEqualTo(withheld);
        if (emulated) {
            assertThat(device.at("/mig/state").asText()).as("the emulator models no MIG").isEqualTo("unknown");
            assertThat(l2).as("the emulator's fake L2").isEqualTo(4 << 20);
        }
        // The device's copy rate, measured in the same run, and every call's share of it.
        assertThat(device.at("/copy_rate/median_gb_s").asDouble()).isPositive();
        assertThat(device.at("/copy_rate/buffer_bytes").asLong()).isGreaterThanOrEqualTo(2L * l2);
        assertThat(r.out()).contains("copy rate ");
        // Two shapes × two lengths × two caches, each with positive bytes and a finite time; a ratio per packed row.
        assertThat(j.get("results")).hasSize(8);
        for (JsonNode row : j.get("results")) {
            String which = row.get("shape").asText() + " " + row.get("tokens") + " " + row.get("cache");
            long raw = row.get("bytes_per_call_raw").asLong();
            assertThat(row.get("fraction_of_copy_rate").asDouble()).as(which).isPositive();
            long sectors = row.get("bytes_per_call_sectors").asLong();
            assertThat(raw).as(which).isGreaterThan(row.get("cache_bytes").asLong());
            // Whole sectors: never fewer bytes than raw, a multiple of 32.
            assertThat(sectors).as(which).isGreaterThanOrEqualTo(raw);
            assertThat(sectors % 32).as(which).isZero();
            // The working set: the fewest copies that hold twice the L2.
            long copy = row.get("copy_device_bytes").asLong();
            int copies = row.get("copies").asInt();
            assertThat(row.get("working_set_bytes").asLong()).isEqualTo(copies * copy);
            assertThat(copies * copy).as(which).isGreaterThanOrEqualTo(2 * l2);
            assertThat((copies - 1) * copy).as(which).isLessThan(2 * l2);
            assertThat(row.get("working_set_covers_twice_l2").asBoolean()).isTrue();
            // Splits: KV heads × chunks of at most longest_chunk_keys keys.
            int tokens = row.get("tokens").asInt();
            int longest = row.get("longest_chunk_keys").asInt();
            int kv = row.get("kv_heads").asInt();
            assertThat(row.get("splits").asInt() % kv).as(which).isZero();
            assertThat(row.get("splits").asInt() / kv).as(which).isBetween((tokens + longest - 1) / longest, tokens);
            assertThat(row.get("ms_per_call_median").asDouble()).isPositive().isFinite();
            assertThat(row.get("ms_per_call_min").asDouble()).isLessThanOrEqualTo(row.get("ms_per_call_median").asDouble());
            // The host's enqueue time beside the device time, and the flag that compares them.
            double host = row.get("host_enqueue_ms_per_call_median").asDouble();
            assertThat(host).as(which).isPositive().isFinite();
            assertThat(row.get("host_bound").asBoolean()).as(which).isEqualTo(host >= 0.5 * row.get("ms_per_call_median").asDouble());
            assertThat(row.get("fraction_of_peak").isNull()).isEqualTo(withheld);
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
        assertThat(org.mechspec.bench.BenchCommand.slug("NVIDIA H200")).isEqualTo("nvidia-h200");
        assertThat(org.mechspec.bench.BenchCommand.slug("NVIDIA GeForce RTX 4090 (Laptop)")).isEqualTo("nvidia-geforce-rtx-4090-laptop");
        assertThat(org.mechspec.bench.BenchCommand.slug("***")).isEqualTo("device");
    }
}
