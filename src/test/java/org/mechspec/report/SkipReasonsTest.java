package org.mechspec.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

/**
 * Skips (no GPU, no data) used to reach only JUnit's own bookkeeping: a run on a machine without a device looked
 * complete on the console. The reporter now ends the run with one line per distinct reason and how many it skipped.
 */
@Tag("platform")
class SkipReasonsTest {
    @TempDir
    Path dir;

    @Test
    void eachDistinctSkipReasonIsOneLineAtTheEndOfTheRun() {
        String out = captureStdout(() -> FixtureLauncher.run(Skips.class, Map.of("mechspec.out", dir.resolve("out").toString(),
                "allure.results.directory", dir.resolve("allure").toString(), "mechspec.backend", "cpu", "mechspec.seeds", "")));
        assertThat(out.lines().filter(l -> l.startsWith("[mechspec] skipped"))).containsExactlyInAnyOrder(
                "[mechspec] skipped 2 test(s): needs a CUDA device: no CUDA driver",
                "[mechspec] skipped 1 test(s): data missing: /nowhere/corpus.txt is absent",
                "[mechspec] skipped 3 test(s): no device for the whole class");
    }

    @Test
    void aRunWithoutSkipsPrintsNoSkipLine() {
        String out = captureStdout(() -> FixtureLauncher.run(NoSkips.class, Map.of("mechspec.out", dir.resolve("out").toString(),
                "allure.results.directory", dir.resolve("allure").toString())));
        assertThat(out).doesNotContain("[mechspec] skipped");
    }

    private static String captureStdout(Runnable run) {
        PrintStream saved = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            run.run();
        } finally {
            System.setOut(saved);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        saved.print(out);
        return out;
    }

    @Tag("launcher-fixture")
    static class Skips {
        @Test
        void gpuOne() {
            assumeTrue(false, "needs a CUDA device: no CUDA driver");
        }

        @Test
        void gpuTwo() {
            throw new TestAbortedException("needs a CUDA device: no CUDA driver");
        }

        @Test
        void data() {
            throw new TestAbortedException("data missing: /nowhere/corpus.txt is absent\n(second line left out)");
        }

        @Test
        void runs() {
        }

        @Nested
        @TestInstance(TestInstance.Lifecycle.PER_CLASS)
        class WholeClass {
            @BeforeAll
            void noDevice() {
                assumeTrue(false, "no device for the whole class");
            }

            @Test
            void a() {
            }

            @Test
            void b() {
            }

            @Test
            void c() {
            }
        }
    }

    @Tag("launcher-fixture")
    static class NoSkips {
        @Test
        void runs() {
        }
    }
}
