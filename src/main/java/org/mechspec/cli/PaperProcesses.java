package org.mechspec.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.mechspec.report.AtomicFiles;
import org.mechspec.report.ListenerErrors;

/**
 * A CUDA run with one JVM per paper. A kernel fault is sticky: CUDA's documentation says the process must end before
 * CUDA works again, so one paper's fault would fail every later paper's CUDA contracts in a shared process. Each
 * paper runs as {@code mechspec run --paper P} into {@code OUT/papers/P}, one after another (one device); its lines
 * stream through, then its artifacts, Allure results, plots, summary and error lines join the run's own folder. The
 * paper's folder stays, so the paths its lines name stay true.
 */
final class PaperProcesses {
    private static final Pattern COUNTS = Pattern.compile("^contracts: (\\d+) passed, (\\d+) failed, (\\d+) skipped$");
    static final String STAGING = "papers";

    long passed;
    long failed;
    long skipped;
    final List<String> errors = new ArrayList<>();

    /**
     * Runs {@code childCommand} + {@code --paper P} + {@code options} for each paper, {@code --out} its own folder under
     * {@code out}, and joins the results into {@code out}.
     */
    void run(List<String> childCommand, List<String> papers, List<String> options, Path out, PrintWriter stdout) throws IOException {
        Path staging = out.resolve(STAGING);
        deleteTree(staging);
        org.mechspec.report.ReportListener.clearStale(out.resolve("reports"), out.resolve("allure-results"));
        List<String> summaries = new ArrayList<>();
        for (String paper : papers) {
            Path folder = staging.resolve(paper);
            List<String> command = new ArrayList<>(javaCommand());
            command.addAll(childCommand);
            command.addAll(List.of("--paper", paper, "--out", folder.toString()));
            command.addAll(options);
            long start = System.nanoTime();
            int code = runStreaming(command, stdout, paper);
            stdout.printf(java.util.Locale.ROOT, "[mechspec] paper %s: its process took %.1f s (exit %d)%n", paper,
                    (System.nanoTime() - start) / 1e9, code);
            if (code != ExitCodes.OK && code != ExitCodes.FINDINGS) {
                errors.add("paper " + paper + ": its process ended with exit code " + code + " (its lines are above)");
            }
            join(paper, folder, out, summaries);
        }
        AtomicFiles.write(out.resolve("summary.md"), "# mechspec run: one process per paper on CUDA (each paper's own folder: "
                + STAGING + "/)\n\n" + String.join("\n", summaries));
    }

    /** The JVM this one runs in, with its heap and mechspec.* properties (e.g. a contracts folder), and its class path. */
    static List<String> javaCommand() {
        List<String> c = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (arg.startsWith("-Xmx") || arg.startsWith("-Xss") || arg.startsWith("-Djava.io.tmpdir=")) {
                c.add(arg);
            }
        }
        System.getProperties().stringPropertyNames().stream().filter(k -> k.startsWith("mechspec.")).sorted()
                .forEach(k -> c.add("-D" + k + "=" + System.getProperty(k)));
        c.addAll(List.of("-cp", System.getProperty("java.class.path")));
        return c;
    }

    /** Runs {@code command}, passing its lines through and keeping its count line; stops it if this JVM is stopped. */
    private int runStreaming(List<String> command, PrintWriter stdout, String paper) throws IOException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        Thread stop = new Thread(p::destroyForcibly);
        Runtime.getRuntime().addShutdownHook(stop);
        boolean counted = false;
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                Matcher m = COUNTS.matcher(line);
                if (m.matches()) {
                    passed += Long.parseLong(m.group(1));
                    failed += Long.parseLong(m.group(2));
                    skipped += Long.parseLong(m.group(3));
                    counted = true;
                    stdout.println("[mechspec] " + paper + ": " + line);
                } else {
                    stdout.println(line);
                }
                stdout.flush();
            }
            return p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw new IOException("interrupted while paper " + paper + " ran", e);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running or ran: the child is being stopped
            }
            if (!counted) {
                failed++; // a paper that reported no counts did not run; never a silent pass
            }
        }
    }

    /** Moves one paper's files into the run's folder: artifacts, Allure results, plots; keeps its summary and errors. */
    private void join(String paper, Path folder, Path out, List<String> summaries) throws IOException {
        Path reports = folder.resolve("reports");
        for (String line : ListenerErrors.read(reports)) {
            errors.add("paper " + paper + ": " + line);
        }
        List<String> missing = ListenerErrors.missingData(reports);
        if (!missing.isEmpty()) {
            Path file = out.resolve("reports").resolve(ListenerErrors.MISSING_DATA_FILE);
            List<String> all = new ArrayList<>(ListenerErrors.missingData(out.resolve("reports")));
            all.addAll(missing);
            AtomicFiles.write(file, String.join("\n", all) + "\n");
        }
        copyTree(reports, out.resolve("reports"), f -> !f.getFileName().toString().startsWith("mechspec-"));
        copyTree(folder.resolve("allure-results"), out.resolve("allure-results"), f -> true);
        copyTree(folder.resolve("plots"), out.resolve("plots"), f -> true);
        Path summary = folder.resolve("summary.md");
        summaries.add(Files.exists(summary) ? Files.readString(summary) : "## " + paper + "\n\nNo summary: its process wrote none.\n");
    }

    static void copyTree(Path from, Path to, java.util.function.Predicate<Path> wanted) throws IOException {
        if (!Files.isDirectory(from)) {
            return;
        }
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : files.filter(Files::isRegularFile).filter(wanted).toList()) {
                Path target = to.resolve(from.relativize(f).toString());
                Files.createDirectories(target.getParent());
                Files.copy(f, target, StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> {
                try {
                    Files.delete(f);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }
}
