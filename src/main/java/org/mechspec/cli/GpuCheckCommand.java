package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.mechspec.compute.Backends;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.DeviceProbe;
import org.mechspec.report.AtomicFiles;
import org.mechspec.report.OutputFolder;
import org.mechspec.report.PaperRun;
import org.mechspec.report.SourceFingerprints;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * Everything a lent GPU should run, prepared as one command: the probe, every paper's CUDA contracts (one process per
 * paper), the decode bench, the receipt, and one tarball of the folder. It prints its estimated duration first and
 * stops what is still running at the budget, naming it, so a lease is never spent waiting.
 */
@Command(name = "gpu-check", mixinStandardHelpOptions = true, header = "On a lent GPU: probe, every CUDA contract, the bench, receipts, one tarball.", description = {
    "Probe the device, print the estimated duration, run every paper's CUDA contracts (each paper in its own process),",
    "then the decode bench; write DIR/run (artifacts, Allure results, gpu-receipt.json on a real GPU), DIR/bench,",
    "DIR/gpu-check.json (device, estimate, each step's time, each paper's launches, bytes and device time) and DIR.tar.gz.",
    "On the emulated driver the same steps run and nothing is GPU evidence.",
    "Exit 0 all passed, 1 a contract failed, a step did not finish or the budget ran out, 2 no usable device or bad options."})
final class GpuCheckCommand implements Callable<Integer> {
    static final String RECORD = "gpu-check.json";
    /** The emulated rehearsal, under reports/, whose host time and launch counts the estimate starts from. */
    static final String BASIS = "gpu/gpu-check.cuda-emulated.json";
    private static final Pattern PAPER_DONE = Pattern.compile("^\\[mechspec] paper (\\S+): its process took ([0-9.]+) s \\(exit (-?\\d+)\\)$");
    private static final Pattern COUNTS = Pattern.compile("^contracts: (\\d+) passed, (\\d+) failed, (\\d+) skipped$");

    @Option(names = "--out", paramLabel = "DIR", required = true, description = "output folder; DIR.tar.gz is written beside it")
    Path out;

    @Option(names = "--data-dir", paramLabel = "DIR", description = "data sets folder (without it, data-backed contracts are skipped)")
    Path dataDir;

    @Option(names = "--backend", paramLabel = "B", defaultValue = "cuda",
            description = "cuda, or cuda-emulated to rehearse on the project's emulated driver (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--budget-minutes", paramLabel = "M", defaultValue = "8",
            description = "stop whatever still runs after M minutes and name it (default: ${DEFAULT-VALUE})")
    double budgetMinutes;

    @Spec
    CommandSpec spec;

    /** The main class (and arguments) of the command that runs the contracts and the bench; tests narrow it. */
    List<String> mainCommand = List.of(Main.class.getName());

    @Override
    public Integer call() throws IOException {
        PrintWriter stdout = spec.commandLine().getOut();
        PrintWriter stderr = spec.commandLine().getErr();
        if (!List.of("cuda", "cuda-emulated").contains(backend)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--backend must be cuda or cuda-emulated, got '" + backend + "'");
        }
        if (!(budgetMinutes > 0)) {
            throw new picocli.CommandLine.ParameterException(spec.commandLine(), "--budget-minutes must be positive");
        }
        String refused = OutputFolder.refusal("--out", out);
        if (refused != null) {
            throw new InputException(refused);
        }
        if (dataDir != null && !Files.isDirectory(dataDir)) {
            throw new InputException("--data-dir " + dataDir + ": no such folder");
        }
        long start = System.nanoTime();
        String unusable = Backends.cudaUnavailableReason(backend);
        if (unusable != null) {
            stderr.println("mechspec: gpu-check needs a CUDA device: " + unusable);
            return ExitCodes.BAD_INPUT;
        }
        OutputFolder.create(out);
        CudaBackend cuda = CudaBackend.get();
        String device = cuda.device();
        boolean emulated = cuda.info().emulated();
        stdout.println("[gpu-check] device: " + device + ", compute capability " + cuda.info().computeCapability() + ", driver for CUDA "
                + cuda.info().driverRelease() + (emulated ? " (emulated: a rehearsal, never GPU evidence)" : ""));
        GpuCheckEstimate estimate = GpuCheckEstimate.of(basis());
        stdout.println("[gpu-check] estimated duration: " + estimate.describe());
        stdout.flush();
        long deadline = start + (long) (budgetMinutes * 60e9);

        ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
        ObjectNode record = json.createObjectNode();
        record.put("device", device);
        record.put("emulated", emulated);
        record.put("commit", SourceFingerprints.recorded().commit());
        record.put("started_utc", Instant.now().toString());
        record.set("estimate", estimate.toJson(json));
        List<String> problems = new ArrayList<>();

        List<String> run = new ArrayList<>(List.of("run", "--backend", backend, "--out", out.toAbsolutePath().resolve("run").toString(), "--quiet"));
        if (dataDir != null) {
            run.addAll(List.of("--data-dir", dataDir.toAbsolutePath().toString()));
        }
        Step contracts = step("contracts", run, deadline, stdout);
        record.set("contracts", contracts.toJson(json));
        papers(record.putObject("papers"), contracts, json);
        if (contracts.failed > 0 || contracts.exit != ExitCodes.OK) {
            problems.add("contracts: " + contracts.failed + " failed, exit " + contracts.exit + (contracts.stopped ? " (stopped at the budget)" : ""));
        }
        Step bench = step("bench", List.of("bench", "--out", out.toAbsolutePath().resolve("bench").toString()), deadline, stdout);
        record.set("bench", bench.toJson(json));
        if (bench.exit != ExitCodes.OK) {
            problems.add("bench: exit " + bench.exit + (bench.stopped ? " (stopped at the budget)" : ""));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        record.put("seconds", seconds);
        record.put("finished_utc", Instant.now().toString());
        record.set("problems", json.valueToTree(problems));
        AtomicFiles.write(out.resolve(RECORD), json.writeValueAsString(record) + "\n");
        Path tarball = tarball();
        stdout.printf(Locale.ROOT, "[gpu-check] done in %.1f min (estimated %.1f): %s; %s%n", seconds / 60, estimate.seconds() / 60,
                problems.isEmpty() ? "every step passed" : String.join("; ", problems), tarball == null ? "no tarball" : "tarball " + tarball);
        if (tarball == null) {
            return ExitCodes.FINDINGS;
        }
        return problems.isEmpty() ? ExitCodes.OK : ExitCodes.FINDINGS;
    }

    /** The committed emulated rehearsal beside the command (bundle or checkout), or null when there is none. */
    private static JsonNode basis() {
        Path file = Path.of(System.getProperty("mechspec.reports.dir", "reports")).resolve(BASIS);
        try {
            return Files.isRegularFile(file) ? new ObjectMapper().readTree(file.toFile()) : null;
        } catch (IOException e) {
            return null; // the estimate then says it has no basis
        }
    }

    /** One child command, its lines passed through, stopped (with its children) at the deadline. */
    private Step step(String name, List<String> args, long deadline, PrintWriter stdout) throws IOException {
        Step s = new Step(name);
        long left = deadline - System.nanoTime();
        if (left <= 0) {
            s.stopped = true;
            s.exit = -1;
            stdout.println("[gpu-check] " + name + ": not started, the budget is spent");
            return s;
        }
        List<String> command = new ArrayList<>(PaperProcesses.javaCommand());
        command.addAll(mainCommand);
        command.addAll(args);
        stdout.println("[gpu-check] " + name + ": " + String.join(" ", args));
        stdout.flush();
        long t0 = System.nanoTime();
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        Thread stop = new Thread(() -> stopTree(p));
        Runtime.getRuntime().addShutdownHook(stop);
        Thread watchdog = new Thread(() -> {
            try {
                if (!p.waitFor(left, TimeUnit.NANOSECONDS)) {
                    s.stopped = true;
                    stopTree(p);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        watchdog.setDaemon(true);
        watchdog.start();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                stdout.println(line);
                stdout.flush();
                Matcher done = PAPER_DONE.matcher(line);
                if (done.matches()) {
                    s.paperSeconds.put(done.group(1), Double.parseDouble(done.group(2)));
                }
                Matcher counts = COUNTS.matcher(line);
                if (counts.matches()) {
                    s.passed = Long.parseLong(counts.group(1));
                    s.failed = Long.parseLong(counts.group(2));
                    s.skipped = Long.parseLong(counts.group(3));
                }
            }
            s.exit = p.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopTree(p);
            throw new IOException("interrupted during " + name, e);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stop);
            } catch (IllegalStateException shuttingDown) {
                // the hook is stopping it
            }
        }
        s.seconds = (System.nanoTime() - t0) / 1e9;
        if (s.stopped) {
            stdout.printf(Locale.ROOT, "[gpu-check] %s: stopped at the budget (%.1f min) after %.1f s%n", name, budgetMinutes, s.seconds);
        }
        return s;
    }

    private static void stopTree(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }

    /** Per paper: its process time and, from its CUDA artifact, launches, bytes and device time summed over seeds. */
    private void papers(ObjectNode into, Step contracts, ObjectMapper json) {
        Path reports = out.resolve("run").resolve("reports");
        contracts.paperSeconds.forEach((paper, secs) -> {
            ObjectNode p = into.putObject(paper);
            p.put("process_seconds", secs);
            String name = paper + "." + backendName() + ".json";
            Path artifact = reports.resolve(name);
            long launches = 0;
            long toDevice = 0;
            long fromDevice = 0;
            double ms = 0;
            if (Files.isRegularFile(artifact)) {
                try {
                    for (JsonNode seed : json.readTree(artifact.toFile()).path("mechspec").path("seeds")) {
                        JsonNode rt = seed.path("runtime");
                        launches += rt.path(PaperRun.KERNEL_LAUNCHES).asLong();
                        toDevice += rt.path(PaperRun.BYTES_TO_DEVICE).asLong();
                        fromDevice += rt.path(PaperRun.BYTES_FROM_DEVICE).asLong();
                        ms += rt.path(PaperRun.DEVICE_MS).asDouble();
                    }
                } catch (IOException e) {
                    p.put("artifact_error", e.getMessage());
                }
            } else {
                p.put("artifact_error", "no " + name);
            }
            p.put("kernel_launches", launches);
            p.put("bytes_to_device", toDevice);
            p.put("bytes_from_device", fromDevice);
            p.put("device_ms", ms);
        });
    }

    /** The artifacts' backend name: cuda on a GPU, cuda-emulated on the emulator. */
    private String backendName() {
        return DeviceProbe.device().emulated() ? "cuda-emulated" : "cuda";
    }

    /** DIR.tar.gz of the whole folder, beside it; null (and a line) when tar fails. */
    private Path tarball() {
        Path dir = out.toAbsolutePath().normalize();
        Path tar = dir.resolveSibling(dir.getFileName() + ".tar.gz");
        try {
            Process p = new ProcessBuilder("tar", "-czf", tar.toString(), "-C", dir.getParent().toString(), dir.getFileName().toString())
                    .redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                spec.commandLine().getErr().println("mechspec: tar of " + dir + " failed: " + output.strip());
                return null;
            }
            return tar;
        } catch (IOException e) {
            spec.commandLine().getErr().println("mechspec: tar of " + dir + " failed: " + e.getMessage());
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** What one child command did. */
    private static final class Step {
        final String name;
        final java.util.Map<String, Double> paperSeconds = new java.util.TreeMap<>();
        double seconds;
        int exit;
        volatile boolean stopped;
        long passed;
        long failed;
        long skipped;

        Step(String name) {
            this.name = name;
        }

        ObjectNode toJson(ObjectMapper json) {
            ObjectNode n = json.createObjectNode();
            n.put("seconds", seconds);
            n.put("exit", exit);
            n.put("stopped_at_budget", stopped);
            if (name.equals("contracts")) {
                n.put("passed", passed);
                n.put("failed", failed);
                n.put("skipped", skipped);
            }
            return n;
        }
    }
}
