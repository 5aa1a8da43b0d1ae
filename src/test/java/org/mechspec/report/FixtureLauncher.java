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

    static void run(Class<?> fixture, Map<String, String> properties) {
        Map<String, String> saved = new HashMap<>();
        properties.forEach((k, v) -> saved.put(k, System.setProperty(k, v)));
        try {
            // Only our listener: Allure's would write the fixture's deliberate failures into the real report.
            LauncherFactory.create(LauncherConfig.builder().enableTestExecutionListenerAutoRegistration(false)
                            .addTestExecutionListeners(new ReportListener()).build())
                    .execute(LauncherDiscoveryRequestBuilder.request().selectors(selectClass(fixture)).build());
        } finally {
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
