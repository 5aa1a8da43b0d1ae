package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code mechspec run --project DIR} (and {@code stress --project DIR}) refuses a folder that is no built paper project in one line, and hands the rest
 * of the command line to the project's run unchanged. (CI runs it on examples/own-paper, built against the installed
 * artifact: .ci/run.)
 */
class ProjectRunTest {
    @Test
    void aFolderWithoutManifestsOrBuildIsRefusedInOneLine(@TempDir Path dir) throws IOException {
        Cli none = Cli.run("run", "--project", dir.toString(), "--out", dir.resolve("out").toString());
        assertThat(none.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(none.err().strip()).isEqualTo("mechspec: --project " + dir + ": no contracts/ folder (a paper's project holds its manifests there)");
        Files.createDirectories(dir.resolve("contracts"));
        Cli unbuilt = Cli.run("run", "--project", dir.toString(), "--out", dir.resolve("out").toString());
        assertThat(unbuilt.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(unbuilt.err().strip()).isEqualTo("mechspec: --project " + dir + ": not built (no target/test-classes); run mvn test-compile in it first");
        assertThat(dir.resolve("out")).doesNotExist();
        Cli stress = Cli.run("stress", "--project", dir.toString(), "--paper", "x", "--out", dir.resolve("out").toString());
        assertThat(stress.code()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(stress.err().strip()).isEqualTo("mechspec: --project " + dir + ": not built (no target/test-classes); run mvn test-compile in it first");
    }

    @Test
    void theProjectRunGetsEveryOtherArgument() {
        assertThat(ProjectRun.without(List.of("run", "--project", "p", "--paper", "x", "--out", "o"), "run"))
                .containsExactly("--paper", "x", "--out", "o");
        assertThat(ProjectRun.without(List.of("run", "--quiet", "--project=p", "--seeds", "42"), "run")).containsExactly("--quiet", "--seeds", "42");
        assertThat(ProjectRun.without(List.of("stress", "--paper", "x", "--project", "p", "--examples", "5"), "stress"))
                .containsExactly("--paper", "x", "--examples", "5");
    }
}
