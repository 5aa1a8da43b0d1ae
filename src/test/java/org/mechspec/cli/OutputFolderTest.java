package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.mechspec.data.DataFiles;
import org.mechspec.report.OutputFolder;

/**
 * Nothing lost: {@code run --out .} in a checkout used to delete seven committed references and replace one; now
 * every command that writes refuses, in one line and exit 2 before anything runs, an output that is, holds or lies
 * inside the committed reports/, contracts/ or fixtures/, a non-folder, an unwritable path, and a folder with files
 * that mechspec did not make.
 */
@Tag("cli")
class OutputFolderTest {
    @TempDir
    Path dir;

    @Test
    void runOutDotInAScratchCheckoutLeavesEveryCommittedFileByteIdentical() throws Exception {
        Path checkout = scratchCheckout();
        Map<String, String> before = hashes(checkout);
        for (String out : List.of(".", "reports", "reports/run", "contracts", "..", "fixtures/../reports")) {
            ChildMain r = ChildMain.run(checkout, Main.class.getName(), List.of(), "run", "--paper", "kernels", "--seeds", "42",
                    "--backend", "cpu", "--out", out);
            assertThat(r.code()).as("--out %s: %s", out, r.out()).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(r.out().strip()).as("--out %s", out).hasLineCount(1).startsWith("mechspec: --out " + out + ": refused, it ")
                    .contains("the committed " + checkout.toRealPath());
            assertThat(hashes(checkout)).as("the checkout after --out %s", out).isEqualTo(before);
        }
    }

    @Test
    void aLinkToTheReferencesIsTheReferences() throws Exception {
        Path checkout = scratchCheckout();
        Path link = Files.createSymbolicLink(dir.resolve("looks-harmless"), checkout.resolve("reports"));
        ChildMain r = ChildMain.run(checkout, Main.class.getName(), List.of(), "run", "--paper", "kernels", "--out", link.toString());
        assertThat(r.code()).as(r.out()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.out()).contains("refused, it is the committed " + checkout.resolve("reports").toRealPath());
    }

    @Test
    void usageErrorsAboutTheOutputAreOneLineBeforeAnythingRuns() throws Exception {
        Path file = Files.writeString(dir.resolve("a-file"), "x");
        Path foreign = Files.createDirectories(dir.resolve("someone-elses"));
        Files.writeString(foreign.resolve("notes.txt"), "mine");
        Map<String, String> expected = Map.of(
                file.toString(), "mechspec: --out " + file + ": not a folder",
                "/proc/nope", "mechspec: cannot write /proc/nope: ",
                foreign.toString(), "mechspec: --out " + foreign + ": refused, a folder that holds files and was not made by mechspec");
        for (var e : expected.entrySet()) {
            Cli r = Cli.run("run", "--paper", "kernels", "--seeds", "42", "--backend", "cpu", "--out", e.getKey());
            assertThat(r.code()).as("%s", r).isEqualTo(ExitCodes.BAD_INPUT);
            assertThat(r.err()).as("%s", r).hasLineCount(1).startsWith(e.getValue());
            assertThat(r.out()).as("nothing ran").isEmpty();
        }
        assertThat(Files.readString(foreign.resolve("notes.txt"))).isEqualTo("mine");
        assertThat(foreign.resolve(OutputFolder.MARKER)).doesNotExist();
    }

    @Test
    void repeatedSeedsOrPapersAreUsageErrors() {
        Cli seeds = Cli.run("run", "--paper", "kernels", "--seeds", "42,42", "--out", dir.resolve("never").toString());
        assertThat(seeds.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(seeds.err().strip()).isEqualTo("mechspec: --seeds names seed 42 more than once (see: mechspec run --help)");
        Cli papers = Cli.run("run", "--paper", "kernels", "--paper", "kernels", "--out", dir.resolve("never").toString());
        assertThat(papers.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(papers.err().strip()).isEqualTo("mechspec: --paper kernels is given more than once (see: mechspec run --help)");
        assertThat(dir.resolve("never")).doesNotExist();
    }

    @Test
    void benchAndMergeRefuseTheCommittedFoldersToo() {
        Cli bench = Cli.run("bench", "--out", "reports");
        assertThat(bench.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(bench.err()).hasLineCount(1).startsWith("mechspec: --out reports: refused, it is the committed ");
        Cli merge = Cli.run("merge", "reports/kernels.cpu.json", "reports/kernels.cpu.json", "--out", "reports/kernels.cpu.json");
        assertThat(merge.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(merge.err()).hasLineCount(1).startsWith("mechspec: --out reports/kernels.cpu.json: refused, it lies inside the committed ");
    }

    @Test
    void aFolderMechspecMadeIsItsToReuseAndAnEmptyOneIsFine() throws IOException {
        Path made = dir.resolve("made");
        assertThat(OutputFolder.refusal("--out", made)).isNull();
        OutputFolder.create(made);
        Files.writeString(made.resolve("summary.md"), "an earlier run");
        assertThat(OutputFolder.refusal("--out", made)).isNull();
        assertThat(OutputFolder.refusal("--out", Files.createDirectories(dir.resolve("empty")))).isNull();
    }

    /** What a fresh clone holds that a run could harm: the build file and the committed folders. */
    private Path scratchCheckout() throws IOException {
        Path checkout = Files.createDirectories(dir.resolve("checkout"));
        Files.copy(Path.of("pom.xml"), checkout.resolve("pom.xml"));
        for (String folder : List.of("reports", "contracts", "fixtures/seeds")) {
            Path from = Path.of(folder);
            try (Stream<Path> files = Files.walk(from)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Path to = checkout.resolve(f.toString());
                    if (Files.isDirectory(f)) {
                        Files.createDirectories(to);
                    } else {
                        Files.copy(f, to);
                    }
                }
            }
        }
        return checkout;
    }

    /** Every file under the checkout, by path, with its SHA-256: what "untouched" means. */
    private static Map<String, String> hashes(Path root) throws IOException {
        Map<String, String> h = new TreeMap<>();
        try (Stream<Path> files = Files.walk(root)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                h.put(root.relativize(f).toString(), Files.isDirectory(f) ? "folder" : DataFiles.sha256(Files.readAllBytes(f)));
            }
        }
        return h;
    }
}
