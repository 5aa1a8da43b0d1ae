package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What validate, diff and merge read: files over the documented size are refused before reading (a 2 GB file used to
 * end in OutOfMemoryError and a stack trace), and a JSON object with a key twice is invalid, named by key and path
 * (the last value used to win silently). Each is one line and exit 2, for every command that reads artifacts.
 */
@Tag("cli")
class InputLimitsTest {
    @TempDir
    Path dir;

    private static final Path REFERENCE = Path.of("reports/kernels.cpu.json");

    @Test
    void aFileOverTheLimitIsOneLineForEveryReader() throws Exception {
        Path huge = dir.resolve("huge.json");
        try (RandomAccessFile f = new RandomAccessFile(huge.toFile(), "rw")) {
            f.setLength(ArtifactFile.MAX_BYTES + 1); // sparse: nothing is written, and nothing must be read
        }
        for (List<String> args : List.of(List.of("validate", huge.toString()), List.of("diff", huge.toString(), REFERENCE.toString()),
                List.of("merge", huge.toString(), REFERENCE.toString(), "--out", dir.resolve("m.json").toString()))) {
            Cli r = Cli.run(args.toArray(String[]::new));
            assertThat(r.code()).as("%s", r).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(r.err().strip()).as("%s", r).isEqualTo("mechspec: " + huge + ": 64.0 MiB, over the 64 MiB an artifact may have; not read");
        }
        assertThat(dir.resolve("m.json")).doesNotExist();
    }

    @Test
    void aDuplicatedKeyIsNamedWithItsPathForEveryReader() throws Exception {
        Path twice = dir.resolve("twice.json");
        Files.writeString(twice, "{\"mechspec\": {\"seeds\": {\"42\": {\"metrics\": {\"x\": 1.0,\n \"x\": 2.0}}}}}\n");
        for (List<String> args : List.of(List.of("validate", twice.toString()), List.of("diff", twice.toString(), REFERENCE.toString()),
                List.of("merge", twice.toString(), REFERENCE.toString(), "--out", dir.resolve("m.json").toString()))) {
            Cli r = Cli.run(args.toArray(String[]::new));
            assertThat(r.code()).as("%s", r).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(r.err().strip()).as("%s", r).isEqualTo("mechspec: " + twice
                    + ": invalid JSON: duplicate key 'x' in the object at mechspec.seeds.42.metrics (line 2): a key must appear once");
        }
        Path top = dir.resolve("top.json");
        Files.writeString(top, "{\"a\": [1, {\"b\": 1, \"b\": 1}]}");
        assertThat(Cli.run("validate", top.toString()).err()).contains("duplicate key 'b' in the object at a[1] (line 1)");
        Files.writeString(top, "{\"a\": 1, \"a\": 1}");
        assertThat(Cli.run("validate", top.toString()).err()).contains("duplicate key 'a' in the object at (root) (line 1)");
    }
}
