package org.mechspec.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.mechspec.spec.ScopedLaunch;

/**
 * A data folder without Qwen's tokenizer.json: every test that reads it is skipped with the data layer's line (which
 * file, where to get it), none fails on a bare NoSuchFileException. One used to.
 */
@Tag("platform")
class MissingDataEverywhereTest {
    @TempDir
    Path dir;

    @Test
    void everyReaderOfTheTokenizerSkipsNamingTheAbsentFile() throws Exception {
        Path data = Files.createDirectories(dir.resolve("data"));
        Map<String, TestExecutionResult> results = launch(data, "org.mechspec.tokenize.BpeTokenizerTest", "org.mechspec.cli.CheckpointRunTest");

        assertThat(results).hasSizeGreaterThanOrEqualTo(3);
        results.forEach((test, result) -> {
            assertThat(result.getStatus()).as(test + ": " + result).isEqualTo(TestExecutionResult.Status.ABORTED);
            assertThat(result.getThrowable().orElseThrow().getMessage()).as(test)
                    .contains(data.resolve("qwen-tokenizer/tokenizer.json") + " is absent: download");
        });
    }

    /** Runs the classes in a launcher of their own (no reporter, Allure kept apart) with the data folder given. */
    static Map<String, TestExecutionResult> launch(Path dataDir, String... classes) {
        Map<String, TestExecutionResult> results = new HashMap<>();
        List<org.junit.platform.engine.DiscoverySelector> selectors = new ArrayList<>();
        for (String c : classes) {
            selectors.add(selectClass(c));
        }
        TestExecutionListener collect = new TestExecutionListener() {
            @Override
            public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                if (id.isTest()) {
                    results.put(id.getUniqueId(), result);
                }
            }
        };
        ScopedLaunch.execute(LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false).build()),
                LauncherDiscoveryRequestBuilder.request().selectors(selectors).build(),
                Map.of("mechspec.data.dir", dataDir.toString(), "mechspec.backend", "cpu"), dataDir.resolveSibling("allure"), collect);
        return results;
    }
}
