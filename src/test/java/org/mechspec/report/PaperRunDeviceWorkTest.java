package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

/** A seed's device work is the sum of what each of its checks did; other runtime figures are the last one recorded. */
class PaperRunDeviceWorkTest {
    private static JsonNode entry(String check, long launches, long toDevice, double ms, double elapsed) throws Exception {
        return PaperRun.JSON.readTree("""
                {"paper": "p", "check": "%s", "seed": 42, "backend": "cuda", "device": "d", "metrics": {},
                 "runtime": {"cuda_kernel_launches": %d, "cuda_bytes_to_device": %d, "cuda_bytes_from_device": 8,
                             "cuda_device_ms": %s, "elapsed_seconds": %s}, "datasets": {}}
                """.formatted(check, launches, toDevice, ms, elapsed));
    }

    @Test
    void launchesBytesAndDeviceTimeAreSummedOverTheChecksOfASeed() throws Exception {
        PaperRun run = new PaperRun("p", "cuda");
        run.add(entry("a", 3, 100, 0.25, 1.5), true);
        run.add(entry("b", 4, 20, 0.5, 2.5), true);
        var runtime = run.seeds.get(42L).runtime;
        assertThat(runtime).containsEntry(PaperRun.KERNEL_LAUNCHES, 7L).containsEntry(PaperRun.BYTES_TO_DEVICE, 120L)
                .containsEntry(PaperRun.BYTES_FROM_DEVICE, 16L).containsEntry(PaperRun.DEVICE_MS, 0.75)
                .as("not device work: not summed").containsEntry("elapsed_seconds", 2.5);
        PaperRun back = PaperRun.fromJson(run.toJson());
        assertThat(back.seeds.get(42L).runtime).as("read back as written").isEqualTo(runtime);
    }
}
