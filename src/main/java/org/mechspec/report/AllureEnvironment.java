package org.mechspec.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Map;

/** Allure's environment.properties: which devices, which commit, which JVM produced the results. */
final class AllureEnvironment {
    private AllureEnvironment() {
    }

    static void write(Map<String, String> devices, String commit) {
        Path dir = Path.of(System.getProperty("allure.results.directory", "target/allure-results"));
        StringBuilder p = new StringBuilder();
        devices.forEach((backend, device) -> p.append("device.").append(backend).append('=').append(escape(device)).append('\n'));
        p.append("commit=").append(commit).append('\n');
        p.append("jvm=").append(escape(System.getProperty("java.vm.name") + " " + System.getProperty("java.version"))).append('\n');
        p.append("os=").append(escape(System.getProperty("os.name") + " " + System.getProperty("os.arch"))).append('\n');
        try {
            AtomicFiles.write(dir.resolve("environment.properties"), p.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir.resolve("environment.properties"), e);
        }
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\n", " ").replace("=", "\\=").replace(":", "\\:");
    }
}
