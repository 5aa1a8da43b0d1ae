package org.mechspec.cli;

import static org.junit.platform.engine.discovery.DiscoverySelectors.selectPackage;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TagFilter;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;
import org.mechspec.compute.Backends;
import org.mechspec.report.ListenerErrors;
import org.mechspec.report.OutputFolder;
import org.mechspec.worker.Implementation;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * Runs the contracts through the JUnit Platform launcher with the same reporter as {@code mvn verify} (registered by
 * ServiceLoader), configured through the system properties it reads.
 */
@Command(name = "run", mixinStandardHelpOptions = true, header = "Run the contracts and write artifacts and Allure results.", description = {
    "Run the contracts (tag 'contract'; --paper narrows them to some papers).",
    "Writes DIR/reports/<paper>.<backend>.json (with --implementation, <paper>.<its id>.json) and DIR/allure-results.",
    "Exit 0 all passed, 1 a contract failed or an artifact was not written, 2 bad options or no usable GPU for --backend cuda."})
final class RunCommand implements Callable<Integer> {
    @Option(names = "--paper", paramLabel = "P", description = "run only this paper's contracts (repeatable; default: all)")
    List<String> papers = new ArrayList<>();

    @Option(names = "--seeds", paramLabel = "S,S", description = "only these manifest seeds, e.g. 42,43 (default: all)")
    String seeds = "";

    @Option(names = "--backend", paramLabel = "B", defaultValue = "auto",
            description = "auto (cpu, plus cuda when a device answers), cpu, cuda, or cuda-emulated (cuda on the"
                    + " project's emulated driver) (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--out", paramLabel = "DIR", defaultValue = "mechspec-out", description = "output folder (default: ${DEFAULT-VALUE})")
    Path out;

    @Option(names = "--quiet", description = "no progress lines (one per contract and seed, and the OAL protocol's phases)")
    boolean quiet;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "data sets folder (e.g. ../shared/data); without it, data-backed runs are skipped")
    Path dataDir;

    @Option(names = "--checkpoint", paramLabel = "DIR", description = {
            "a Hugging Face checkpoint folder (e.g. Qwen2.5-0.5B's) to run the papers that declare a checkpoint_protocol on,",
            "instead of their own fixtures (OAL: Qwen BPE blocks; needs --data-dir)"})
    Path checkpoint;

    @Option(names = "--implementation", paramLabel = "CMD", description = {
            "judge an outside implementation: start CMD as a worker (src/main/worker/PROTOCOL.md) and run every paper it serves",
            "with its operations in place of mechspec's own (mechspec's CPU serves the rest); artifacts <paper>.<its id>.json"})
    String implementation;

    @Option(names = "--implementation-timeout", paramLabel = "SECONDS", defaultValue = "120",
            description = "how long a worker may take to answer one call before it is stopped (default: ${DEFAULT-VALUE})")
    double implementationTimeout;

    @Option(names = "--implementation-files", paramLabel = "F", split = ",",
            description = "files that make up the implementation; their SHA-256 go into each artifact's provenance")
    List<Path> implementationFiles = new ArrayList<>();

    @Option(names = "--property-seed", paramLabel = "N", description = {
            "QuickTheories' seed for the property halves (-Dmechspec.propertySeed): the one a failed property's summary line",
            "names replays its shrunk case (default: drawn per run and printed)"})
    Long propertySeed;

    @Option(names = "--project", paramLabel = "DIR", description = {
            "run the papers of a Maven project of their own that depends on mechspec (examples/own-paper): its manifests",
            "(DIR/contracts), its classes and tests (built there with mvn test-compile) and the dependencies its build lists",
            "in DIR/" + ProjectRun.CLASSPATH_FILE})
    Path project;

    @Spec
    CommandSpec spec;

    /** What discovery scans (null: the selected papers' packages) and leaves out; tests narrow these to their fixtures. */
    String scanPackage;
    List<String> excludedTags = List.of("launcher-fixture");
    /** The main class (and arguments) that runs one paper in a JVM of its own on CUDA ({@link PaperProcesses}). */
    List<String> childCommand = List.of(Main.class.getName(), "run");

    @Override
    public Integer call() {
        PrintWriter stdout = spec.commandLine().getOut();
        PrintWriter stderr = spec.commandLine().getErr();
        if (project != null) {
            return ProjectRun.run(project, "run", spec.commandLine().getParseResult().originalArgs(), stdout);
        }
        checkOptions();
        String unusable = backend.startsWith("cuda") ? Backends.cudaUnavailableReason(backend) : null;
        if (unusable != null) {
            stderr.println("mechspec: --backend " + backend + " was asked for, but " + unusable);
            return ExitCodes.BAD_INPUT;
        }
        try {
            OutputFolder.create(out);
        } catch (java.io.IOException e) {
            throw InputException.cannotWrite(out, e);
        }
        List<String> selected = papers.isEmpty() ? Manifests.contracts().papers() : papers;
        boolean cuda = backend.startsWith("cuda") || backend.equals("auto") && org.mechspec.compute.DeviceProbe.unavailableReason() == null;
        if (cuda && selected.size() > 1) {
            return paperByPaper(selected, stdout, stderr);
        }
        Map<String, String> properties = new HashMap<>();
        properties.put("mechspec.backend", backend);
        properties.put("mechspec.seeds", seeds);
        properties.put("mechspec.quiet", Boolean.toString(quiet));
        properties.put("mechspec.out", out.toAbsolutePath().resolve("reports").toString());
        properties.put("allure.results.directory", out.toAbsolutePath().resolve("allure-results").toString());
        if (dataDir != null) {
            properties.put("mechspec.data.dir", dataDir.toAbsolutePath().toString());
        }
        if (propertySeed != null) {
            properties.put("mechspec.propertySeed", Long.toString(propertySeed));
        }
        if (checkpoint != null) {
            properties.put(org.mechspec.spec.ManifestLoader.CHECKPOINT_PROPERTY, checkpoint.toAbsolutePath().toString());
        }
        if (implementation != null) {
            properties.put(Implementation.PROPERTY, implementation);
            properties.put(Implementation.TIMEOUT_PROPERTY, Double.toString(implementationTimeout));
            properties.put(Implementation.FILES_PROPERTY, String.join(",", implementationFiles.stream().map(p -> p.toAbsolutePath().toString()).toList()));
        }
        if (implementation != null) {
            String failure = startImplementation(properties);
            if (failure != null) {
                stderr.println("mechspec: the implementation did not start, so no contract ran: " + failure);
                return ExitCodes.BAD_INPUT;
            }
        }
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        FailurePrinter printer = new FailurePrinter(stdout, quiet);
        RunInterruption progress = new RunInterruption();
        try {
            progress.during(() -> org.mechspec.spec.ScopedLaunch.execute(org.junit.platform.launcher.core.LauncherFactory.create(), request(),
                    properties, out.toAbsolutePath().resolve("allure-results"), summary, printer, progress), out, stdout);
        } finally {
            Implementation.closeCurrent(); // nothing of the worker outlives the run
        }
        TestExecutionSummary s = summary.getSummary();
        long failed = s.getTotalFailureCount();
        long skipped = s.getTestsSkippedCount() + s.getTestsAbortedCount() - printer.notJudged;
        stdout.println("contracts: " + s.getTestsSucceededCount() + " passed, " + failed + " failed, "
                + (implementation == null ? "" : printer.notJudged + " not judged, ") + skipped + " skipped");
        stdout.flush();
        if (s.getTestsFoundCount() == 0) {
            stderr.println("mechspec: no contract matched" + (papers.isEmpty() ? "" : " --paper " + String.join(", ", papers)));
            return ExitCodes.BAD_INPUT;
        }
        List<String> errors;
        try {
            errors = ListenerErrors.read(out.toAbsolutePath().resolve("reports"));
        } catch (java.io.IOException e) {
            errors = List.of("cannot read the reporter's errors: " + e.getMessage());
        }
        errors.forEach(e -> stderr.println("mechspec: " + e));
        if (implementation != null) {
            return failed > 0 || !errors.isEmpty() ? ExitCodes.FINDINGS : ExitCodes.OK; // an outside implementation earns no GPU receipt
        }
        return finish(failed, s.getTestsSucceededCount(), skipped, errors, stdout, stderr);
    }

    /**
     * Starts the worker and reads its handshake before any contract runs (the launch then reuses it): why it could not
     * start, or null. A worker that cannot start would otherwise fail every contract of every paper, the ones that call
     * none of its operations included; its exchange folder is removed either way.
     */
    private static String startImplementation(Map<String, String> properties) {
        List<String> keys = List.of(Implementation.PROPERTY, Implementation.TIMEOUT_PROPERTY, Implementation.FILES_PROPERTY);
        Map<String, String> before = new java.util.HashMap<>();
        keys.forEach(k -> before.put(k, System.getProperty(k)));
        try {
            keys.forEach(k -> System.setProperty(k, properties.get(k)));
            Implementation.current();
            return null;
        } catch (RuntimeException e) {
            Implementation.closeCurrent();
            return e.getMessage() == null ? e.toString() : e.getMessage().lines().findFirst().orElse("");
        } finally {
            keys.forEach(k -> {
                if (before.get(k) == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, before.get(k));
                }
            });
        }
    }

    /** Each paper in a JVM of its own, so a sticky kernel fault in one leaves the others' CUDA contracts running. */
    private int paperByPaper(List<String> selected, PrintWriter stdout, PrintWriter stderr) {
        List<String> options = new ArrayList<>(List.of("--backend", backend));
        if (!seeds.isBlank()) {
            options.addAll(List.of("--seeds", seeds));
        }
        if (quiet) {
            options.add("--quiet");
        }
        if (dataDir != null) {
            options.addAll(List.of("--data-dir", dataDir.toAbsolutePath().toString()));
        }
        if (checkpoint != null) {
            options.addAll(List.of("--checkpoint", checkpoint.toAbsolutePath().toString()));
        }
        if (propertySeed != null) {
            options.addAll(List.of("--property-seed", Long.toString(propertySeed)));
        }
        stdout.println("[mechspec] CUDA: each paper runs in a process of its own (" + String.join(", ", selected) + ")");
        PaperProcesses run = new PaperProcesses();
        try {
            run.run(childCommand, selected, options, out.toAbsolutePath(), stdout);
        } catch (java.io.IOException | RuntimeException e) {
            run.errors.add("the per-paper run did not finish: " + e.getMessage());
        }
        stdout.println("contracts: " + run.passed + " passed, " + run.failed + " failed, " + run.skipped + " skipped");
        stdout.flush();
        run.errors.forEach(e -> stderr.println("mechspec: " + e));
        return finish(run.failed, run.passed, run.skipped, run.errors, stdout, stderr);
    }

    /** The GPU receipt (a real GPU, every contract counted) and the exit code. */
    private int finish(long failed, long passed, long skipped, List<String> errors, PrintWriter stdout, PrintWriter stderr) {
        try {
            Path receipt = GpuReceipt.write(out.toAbsolutePath(), backend, passed, failed, skipped);
            if (receipt != null) {
                stdout.println("GPU receipt: " + receipt);
            }
        } catch (java.io.IOException | RuntimeException e) {
            stderr.println("mechspec: GPU receipt not written: " + e.getMessage());
            return ExitCodes.FINDINGS;
        }
        return failed > 0 || !errors.isEmpty() ? ExitCodes.FINDINGS : ExitCodes.OK;
    }

    private void checkOptions() {
        if (!Backends.NAMES.contains(backend)) {
            throw new ParameterException(spec.commandLine(), "--backend must be one of " + String.join(", ", Backends.NAMES)
                    + ", got '" + backend + "'");
        }
        if (!seeds.isBlank() && !(seeds.matches("\\s*-?\\d+\\s*(,\\s*-?\\d+\\s*)*") && allLongs(seeds))) {
            throw new ParameterException(spec.commandLine(), "--seeds must be a comma-separated list of integers, got '" + seeds + "'");
        }
        String repeated = repeated(seeds.isBlank() ? List.of() : Arrays.stream(seeds.split(",")).map(s -> Long.valueOf(s.strip())).toList());
        if (repeated != null) {
            throw new ParameterException(spec.commandLine(), "--seeds names seed " + repeated + " more than once");
        }
        repeated = repeated(papers);
        if (repeated != null) {
            throw new ParameterException(spec.commandLine(), "--paper " + repeated + " is given more than once");
        }
        Manifests manifests = Manifests.contracts();
        List<String> known = manifests.papers();
        for (String p : papers) {
            if (!known.contains(p)) {
                throw new ParameterException(spec.commandLine(), "unknown paper '" + p + "' (known: " + String.join(", ", known) + ")");
            }
        }
        String unknownSeeds = unknownSeeds(manifests, papers.isEmpty() ? known : papers, seeds);
        if (unknownSeeds != null) {
            throw new ParameterException(spec.commandLine(), unknownSeeds);
        }
        if (dataDir != null && !Files.isDirectory(dataDir)) {
            throw new ParameterException(spec.commandLine(), "--data-dir " + dataDir + ": no such folder");
        }
        if (checkpoint != null && !Files.isRegularFile(checkpoint.resolve("config.json"))) {
            throw new ParameterException(spec.commandLine(), "--checkpoint " + checkpoint + ": not a checkpoint folder (no config.json)");
        }
        if (implementation != null) {
            if (implementation.isBlank()) {
                throw new ParameterException(spec.commandLine(), "--implementation needs a command, e.g. \"python3 my_worker.py\"");
            }
            if (!List.of("auto", "cpu").contains(backend)) {
                throw new ParameterException(spec.commandLine(), "--implementation runs the worker with mechspec's CPU for the rest;"
                        + " --backend " + backend + " cannot be combined with it");
            }
            if (!(implementationTimeout > 0) || Double.isInfinite(implementationTimeout)) {
                throw new ParameterException(spec.commandLine(), "--implementation-timeout must be a positive number of seconds");
            }
            for (Path f : implementationFiles) {
                if (!Files.isRegularFile(f)) {
                    throw new ParameterException(spec.commandLine(), "--implementation-files " + f + ": no such file");
                }
            }
        } else if (!implementationFiles.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "--implementation-files needs --implementation");
        }
        String refused = OutputFolder.refusal("--out", out);
        if (refused != null) {
            throw new InputException(refused);
        }
    }

    /** The first value that {@code values} holds twice, or null. */
    private static String repeated(List<?> values) {
        Set<Object> seen = new java.util.HashSet<>();
        for (Object v : values) {
            if (!seen.add(v)) {
                return String.valueOf(v);
            }
        }
        return null;
    }

    private static boolean allLongs(String seeds) {
        try {
            Arrays.stream(seeds.split(",")).map(String::strip).forEach(Long::parseLong);
            return true;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    /**
     * Null when every seed of {@code --seeds} is a manifest seed of at least one selected paper (a run selects only
     * manifest seeds, so any other seed would run nothing and pass); else the line saying which are not, and the
     * seeds each paper has.
     */
    static String unknownSeeds(Manifests manifests, List<String> selected, String seeds) {
        if (seeds.isBlank()) {
            return null;
        }
        Set<Long> declared = new TreeSet<>();
        Map<String, List<Long>> byPaper = new TreeMap<>();
        for (String p : selected) {
            List<Long> s = manifests.forPaper(p).seeds();
            byPaper.put(p, s);
            declared.addAll(s);
        }
        List<Long> unknown = Arrays.stream(seeds.split(",")).map(String::strip).map(Long::valueOf)
                .filter(s -> !declared.contains(s)).distinct().toList();
        if (unknown.isEmpty()) {
            return null;
        }
        List<String> each = new ArrayList<>();
        byPaper.forEach((p, s) -> each.add(p + ": " + s.stream().map(String::valueOf).collect(Collectors.joining(", "))));
        return "--seeds " + unknown.stream().map(String::valueOf).collect(Collectors.joining(","))
                + (unknown.size() == 1 ? " is not a manifest seed" : " are not manifest seeds") + " of "
                + (selected.size() == 1 ? selected.get(0) : "any selected paper") + " (" + String.join("; ", each) + ")";
    }

    private LauncherDiscoveryRequest request() {
        Manifests manifests = Manifests.contracts();
        List<String> packages = scanPackage != null ? List.of(scanPackage) : org.mechspec.spec.ContractCoverage.packages(
                (papers.isEmpty() ? manifests.papers() : papers).stream().map(manifests::forPaper).toList());
        LauncherDiscoveryRequestBuilder b = LauncherDiscoveryRequestBuilder.request()
                .selectors(packages.stream().map(p -> selectPackage(p)).toList())
                .filters(TagFilter.includeTags("contract"));
        if (!excludedTags.isEmpty()) {
            b.filters(TagFilter.excludeTags(excludedTags));
        }
        if (!papers.isEmpty()) {
            b.filters(TagFilter.includeTags(papers));
        }
        return b.build();
    }
}
