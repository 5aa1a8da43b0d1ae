package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The build's device gate: {@code -Dmechspec.backend=cuda} where no device answers is one line saying why, left in
 * the verdict file for the build to fail on (exec-maven-plugin prints a stack trace for a forked JVM's non-zero exit).
 */
@Tag("cuda")
@Tag("platform")
class DeviceGateTest {
    private final String saved = System.getProperty("mechspec.backend");

    @TempDir
    Path dir;

    @AfterEach
    void restore() {
        if (saved == null) {
            System.clearProperty("mechspec.backend");
        } else {
            System.setProperty("mechspec.backend", saved);
        }
    }

    @Test
    void backendsThatNeedNoDeviceAreNeverRefused() {
        assertThat(DeviceGate.refusal("cpu")).isNull();
        assertThat(DeviceGate.refusal("auto")).isNull();
        assertThat(DeviceGate.refusal("")).isNull();
    }

    @Test
    void anUnknownBackendIsOneLineNotAStackTrace() {
        assertThat(DeviceGate.refusal("tpu")).isEqualTo("mechspec: -Dmechspec.backend must be one of auto, cpu, cuda, cuda-emulated, got 'tpu'");
    }

    @Test
    void cudaWithoutADeviceIsOneLineWithTheProbesReason() {
        String reason = Backends.cudaUnavailableReason("cuda");
        String refusal = DeviceGate.refusal("cuda");
        if (reason == null) {
            assertThat(refusal).isNull();
            return;
        }
        assertThat(refusal).isEqualTo("mechspec: -Dmechspec.backend=cuda was asked for, but " + reason).doesNotContain("\n")
                .doesNotContain("\tat ");
    }

    @Test
    void withAVerdictFileTheGateLeavesTheLineThereInsteadOfExiting() throws Exception {
        Path verdict = dir.resolve("mechspec/device-gate.txt");
        Files.createDirectories(verdict.getParent());
        Files.writeString(verdict, "stale verdict of an earlier build"); // overwritten: empty when the gate lets it pass
        DeviceGate.main(new String[] {"cpu", verdict.toString()});
        assertThat(verdict).isEmptyFile();
        DeviceGate.main(new String[] {"cuda", verdict.toString()}); // returns, whatever the device says
        String refusal = DeviceGate.refusal("cuda");
        if (refusal == null) {
            assertThat(verdict).isEmptyFile();
        } else {
            assertThat(Files.readString(verdict)).isEqualTo(refusal);
        }
    }
}
