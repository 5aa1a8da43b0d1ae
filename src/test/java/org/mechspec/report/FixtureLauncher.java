package org.mechspec.report;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.HashMap;
import java.util.Map;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/** Runs a fixture contract class through a real launcher with only the reporter's listener, under given properties. */
final class FixtureLauncher {
    private FixtureLauncher() {
    }

    static void run(Class<?> fixture, Map<String, String> properties, org.junit.platform.launcher.TestExecutionListener... others) {
        Map<String, String> saved = new HashMap<>();
        properties.forEach((k, v) -> saved.put(k, System.setProperty(k, v)));
        // The fixture's own Allure calls (its contracts' labels and steps) must not land on the test that launches it.
        io.qameta.allure.AllureLifecycle outer = io.qameta.allure.Allure.getLifecycle();
        io.qameta.allure.Allure.setLifecycle(new io.qameta.allure.AllureLifecycle(new io.qameta.allure.FileSystemResultsWriter(
                java.nio.file.Path.of(System.getProperty("allure.results.directory", "target/fixture-allure-results")))));
        try {
            // Only our listener: Allure's would write the fixture's deliberate failures into the real report.
            LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false)
                            .addTestExecutionListeners(new ReportListener()).addTestExecutionListeners(others).build())
                    .execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(fixture)).build());
        } finally {
            io.qameta.allure.Allure.setLifecycle(outer);
            saved.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
    }
}
