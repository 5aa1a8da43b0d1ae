package org.mechspec.spec;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.Launcher;

/**
 * One launch of the contracts under the system properties the reporter and contracts read, restored afterwards, with
 * Allure's results sent to the run's own folder (also when a test runs a command inside another launch).
 */
public final class ScopedLaunch {
    private ScopedLaunch() {
    }

    /** Executes {@code request} with the given system properties and Allure results folder, restoring both afterwards. */
    public static void execute(Launcher launcher, LauncherDiscoveryRequest request, Map<String, String> properties, Path allureResults,
                               TestExecutionListener... listeners) {
        Map<String, String> scoped = new HashMap<>(properties);
        // A launch judges an outside implementation only when it names one: a fixture or a plain `run` inside a build
        // that judges a worker still judges mechspec's own code.
        scoped.putIfAbsent(org.mechspec.worker.Implementation.PROPERTY, "");
        Map<String, String> saved = new HashMap<>();
        scoped.forEach((k, v) -> saved.put(k, System.setProperty(k, v)));
        io.qameta.allure.AllureLifecycle outer = io.qameta.allure.Allure.getLifecycle();
        io.qameta.allure.Allure.setLifecycle(new io.qameta.allure.AllureLifecycle(new io.qameta.allure.FileSystemResultsWriter(allureResults)));
        try {
            launcher.execute(request, listeners);
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
