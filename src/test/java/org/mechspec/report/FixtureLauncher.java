package org.mechspec.report;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import java.util.Map;
import org.junit.platform.launcher.core.LauncherConfig;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

/** Runs a fixture contract class through a real launcher with only the reporter's listener, under given properties. */
final class FixtureLauncher {
    private FixtureLauncher() {
    }

    static void run(Class<?> fixture, Map<String, String> properties, org.junit.platform.launcher.TestExecutionListener... others) {
        // Only our listener: Allure's would write the fixture's deliberate failures into the real report; the fixture's
        // own Allure calls (its contracts' labels and steps) go to a results folder of their own.
        org.mechspec.spec.ScopedLaunch.execute(LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false)
                        .addTestExecutionListeners(new ReportListener()).addTestExecutionListeners(others).build()),
                LauncherDiscoveryRequestBuilder.request().selectors(selectClass(fixture)).build(), properties,
                java.nio.file.Path.of(properties.getOrDefault("allure.results.directory",
                        System.getProperty("allure.results.directory", "target/fixture-allure-results"))));
    }
}
