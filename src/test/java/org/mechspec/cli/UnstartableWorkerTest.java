package org.mechspec.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker that cannot start, or fails its handshake, is one line naming why (its stderr's last lines), exit 2, no
 * contract run, and no exchange folder left behind.
 */
@Tag("worker")
class UnstartableWorkerTest {
    @TempDir
    Path dir;

    @Test
    void aWorkerThatDoesNotStartIsOneLineAndRunsNoContract() throws IOException {
        Set<Path> before = ExchangeFolders.ofThisJvm();
        Cli r = Cli.run("run", "--implementation", "python3 " + dir.resolve("no_such_worker.py"), "--paper", "kernels", "--seeds", "42",
                "--quiet", "--out", dir.resolve("out").toString());
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err().strip()).as(r.toString()).startsWith("mechspec: the implementation did not start, so no contract ran:")
                .contains("no_such_worker.py").doesNotContain("\n");
        assertThat(r.out()).as("no contract ran").doesNotContain("contracts:");
        assertThat(ExchangeFolders.ofThisJvm()).as("exchange folders left behind").isSubsetOf(before);
    }

    @Test
    void aWorkerThatFailsItsHandshakeIsOneLineAndRunsNoContract() throws IOException {
        Set<Path> before = ExchangeFolders.ofThisJvm();
        Cli r = Cli.run("run", "--implementation", "python3 " + Path.of("src/test/worker/misbehaving_worker.py").toAbsolutePath() + " unknown-op",
                "--paper", "kernels", "--seeds", "42", "--quiet", "--out", dir.resolve("out").toString());
        assertThat(r.code()).as(r.toString()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(r.err().strip()).contains("handshake names unknown operation 'round_to_hlaf'").doesNotContain("\n");
        assertThat(ExchangeFolders.ofThisJvm()).isSubsetOf(before);
    }
}
