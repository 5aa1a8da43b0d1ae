package org.mechspec.compute;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("platform")
class ProgressTest {
    @Test
    void oneLinePerStepNamingPaperSeedPhaseAndElapsedUnlessQuiet() {
        PrintStream was = System.err;
        String quiet = System.getProperty("mechspec.quiet");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        try {
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            System.clearProperty("mechspec.quiet");
            Progress.step("oal", 43, "matched LoRA, 24 steps");
            System.setProperty("mechspec.quiet", "true");
            Progress.step("oal", 44, "evaluation");
        } finally {
            System.setErr(was);
            if (quiet == null) {
                System.clearProperty("mechspec.quiet");
            } else {
                System.setProperty("mechspec.quiet", quiet);
            }
        }
        assertThat(err.toString(StandardCharsets.UTF_8)).matches("\\[mechspec] oal seed 43: matched LoRA, 24 steps \\(\\d+\\.\\d s\\)\\R");
    }
}
