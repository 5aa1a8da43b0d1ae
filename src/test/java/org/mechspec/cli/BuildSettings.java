package org.mechspec.cli;

import java.nio.file.Path;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * The data folder, contracts folder and backend the build passed, read once when the first launcher session opens,
 * before any test runs. Classes that run beside the others ({@code @Execution(CONCURRENT)}) read these, never the live
 * properties: fixture launches and bad-input tests repoint {@code mechspec.*} properties for a moment.
 */
public final class BuildSettings implements LauncherSessionListener {
    static final Path DATA = Path.of(System.getProperty("mechspec.data.dir", "../shared/data")).toAbsolutePath().normalize();
    static final Path CONTRACTS = Path.of(System.getProperty("mechspec.contracts.dir", "contracts")).toAbsolutePath().normalize();
    static final String BACKEND = System.getProperty("mechspec.backend", "auto");

    @Override
    public void launcherSessionOpened(LauncherSession session) {
        // Nothing to do: loading this class (ServiceLoader, at the first session) has read the settings.
    }
}
