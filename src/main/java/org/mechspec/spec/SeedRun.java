package org.mechspec.spec;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.mechspec.compute.Backend;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.DeviceWork;
import org.mechspec.report.PaperRun;
import org.mechspec.worker.Implementation;
import org.mechspec.worker.Usage;
import org.mechspec.worker.WorkerBackend;

/**
 * One seeded invocation of a contract: the seed, the backend to run on, and where its measurements go.
 * Only manifest-declared metrics are accepted, and only finite numbers: an artifact never holds a NaN.
 * The {@link ContractExtension} publishes what was recorded as a report entry when the invocation ends.
 * Work every check of a seed needs (the protocol run) is computed once per test launch through {@link #shared}.
 */
public final class SeedRun {
    /** Report-entry key of a seeded invocation's record. */
    public static final String ENTRY_KEY = "mechspec.seed";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Manifest manifest;
    private final String check;
    private final long seed;
    private final Backend backend;
    private final Map<String, Object> metrics = new LinkedHashMap<>();
    /** Baseline name → its figures for this seed ({@link #baseline}). */
    private final Map<String, Map<String, Object>> baselines = new java.util.TreeMap<>();
    private final Map<String, Object> runtime = new LinkedHashMap<>();
    private final Map<String, String> datasets = new LinkedHashMap<>();
    private ObjectNode checkpoint;
    private final ExtensionContext.Store launch;
    /** Device work of the shared values this invocation read that other invocations computed. */
    private DeviceWork sharedWork = DeviceWork.NONE;
    private DeviceWork ownWork;
    /** Why this invocation judged nothing of the outside implementation (null: it judged, or there is none). */
    private String notJudged;

    /**
     * @param launch where {@link #shared} values live: the root store of the launch running the contract (so a new
     *               launch, e.g. each of PIT's mutants, computes them afresh); null computes every time
     */
    public SeedRun(Manifest manifest, String check, long seed, Backend backend, ExtensionContext.Store launch) {
        manifest.check(check);
        this.manifest = manifest;
        this.check = check;
        this.seed = seed;
        this.backend = backend;
        this.launch = launch;
    }

    /**
     * The value named {@code name} for this paper, backend and seed, computed by {@code compute} at most once per
     * launch and shared by every check of the seed.
     */
    public <T> T shared(String name, Class<T> type, Supplier<T> compute) {
        if (launch == null) {
            return compute.get();
        }
        String key = manifest.paper() + "/" + backend.name() + "/" + seed + "/" + name;
        DeviceWork[] measured = {null};
        Usage[] used = {null};
        T value = launch.getOrComputeIfAbsent(key, k -> {
            DeviceWork before = workSoFar(backend);
            used[0] = new Usage();
            Usage outer = implementation() == null ? null : implementation().track(used[0]);
            try {
                T v = compute.get();
                measured[0] = workSoFar(backend).since(before);
                return v;
            } finally {
                if (implementation() != null) {
                    implementation().track(outer);
                    if (outer != null) {
                        outer.add(used[0]);
                    }
                }
            }
        }, type);
        if (measured[0] != null) {
            launch.put(key + ":device-work", measured[0]);
            launch.put(key + ":worker-usage", used[0]);
        } else { // computed by another check of this seed: its device work is behind these figures too
            sharedWork = sharedWork.plus(launch.getOrDefault(key + ":device-work", DeviceWork.class, DeviceWork.NONE));
            // and so is what the worker computed for it: the figures this check judges came from those calls
            Usage theirs = launch.get(key + ":worker-usage", Usage.class);
            Usage ours = implementation() == null ? null : implementation().tracking();
            if (theirs != null && ours != null) {
                ours.add(theirs);
            }
        }
        return value;
    }

    /**
     * The value named {@code name} for this paper, computed at most once per launch and shared by every seed and
     * backend (a model loaded from a checkpoint folder: 2 GB for Qwen2.5-0.5B, so never once per seed).
     */
    public <T> T sharedBySeeds(String name, Class<T> type, Supplier<T> compute) {
        if (launch == null) {
            return compute.get();
        }
        return launch.getOrComputeIfAbsent(manifest.paper() + "/" + name, k -> compute.get(), type);
    }

    private Implementation implementation() {
        return backend instanceof WorkerBackend w ? w.implementation() : null;
    }

    /** Marks this invocation as one that judged nothing of the implementation, with the reason (its record says so). */
    void notJudged(String reason) {
        notJudged = reason;
    }

    /** The manifest seed this invocation runs. */
    public long seed() {
        return seed;
    }

    /** The backend this invocation runs on. */
    public Backend backend() {
        return backend;
    }

    /** The paper's manifest. */
    public Manifest manifest() {
        return manifest;
    }

    /** The check this invocation judges (run.check() asserts it). */
    public String checkName() {
        return check;
    }

    /** The check's threshold from the manifest (so tests never restate it). */
    public double threshold() {
        double t = manifest.check(check).threshold();
        if (Double.isNaN(t)) {
            throw new ManifestException(manifest.file() + ": check '" + check + "' declares no 'threshold'");
        }
        return t;
    }

    /**
     * The paper's protocol on this seed and backend, run once per launch and shared by every check of the seed: the
     * one per-(backend, seed) helper a paper needs ({@code run.protocol(KiviResult.class, KiviProtocol::run)}).
     */
    public <T> T protocol(Class<T> type, java.util.function.BiFunction<Long, Backend, T> protocol) {
        return shared("protocol:" + type.getName(), type, () -> protocol.apply(seed, backend));
    }

    /** Every launch and copy so far on {@code backend}: CUDA counts them; other backends do no device work. */
    public static DeviceWork workSoFar(Backend backend) {
        return backend instanceof CudaBackend cuda ? cuda.work() : DeviceWork.NONE;
    }

    /**
     * Records what this invocation did on the device (its own launches, and the protocol's when it ran here) as runtime
     * figures, summed over a seed's checks in the artifact: CUDA launches, bytes each way, device milliseconds.
     */
    void deviceWork(DeviceWork work) {
        if (!(backend instanceof CudaBackend)) {
            return;
        }
        ownWork = work;
        runtime.put(PaperRun.KERNEL_LAUNCHES, work.kernelLaunches());
        runtime.put(PaperRun.BYTES_TO_DEVICE, work.bytesToDevice());
        runtime.put(PaperRun.BYTES_FROM_DEVICE, work.bytesFromDevice());
        if (!Double.isNaN(work.deviceMs())) {
            runtime.put(PaperRun.DEVICE_MS, work.deviceMs());
        }
    }

    /** Device work behind this invocation's figures: its own, plus that of shared values other checks of the seed computed. */
    DeviceWork workBehindFigures() {
        return ownWork.plus(sharedWork);
    }

    /** What this invocation itself did on the device (null until it ended, or off CUDA). */
    DeviceWork ownWork() {
        return ownWork;
    }

    /**
     * Records every component of {@code measured} whose snake_case name is a declared metric ({@code keyBytes} →
     * {@code key_bytes}; numbers and booleans), so a protocol's result record is recorded in one call. Components that
     * are not metrics (arrays, intermediates) are left alone; naming none is an error, since then nothing was recorded.
     */
    public SeedRun metrics(Record measured) {
        Figures.metricsOf(manifest, measured).forEach((name, v) -> {
            if (v instanceof Boolean b) {
                metric(name, b);
            } else if (v instanceof Long l) {
                metric(name, l);
            } else {
                metric(name, ((Number) v).doubleValue());
            }
        });
        return this;
    }

    /**
     * Asserts the check's declared figures (the manifest's {@code figures}: metric, comparison, bound) on what this
     * seed recorded: each comparison is written once, in the manifest. A failure names every figure that does not hold.
     */
    public void check() {
        List<Figures.Outcome> figures = Figures.evaluate(manifest, check, metrics);
        if (figures.isEmpty()) {
            throw new ManifestException(manifest.file() + ": check '" + check + "' declares no figures, so run.check() has"
                    + " nothing to judge: declare them, or pass the condition with run.check(holds)");
        }
        List<String> failing = figures.stream().filter(f -> !f.holds()).map(Figures.Outcome::failingLine).toList();
        if (!failing.isEmpty()) { // the figure first: a FAILED line cut at its width still shows what failed
            throw new AssertionError(String.join("; ", failing) + " — " + manifest.paper() + "/" + check + " does not hold on seed "
                    + seed + " (" + backend.name() + ")");
        }
    }

    /**
     * Asserts that the check holds on this seed, after the figures were recorded with {@link #metric}: a failure
     * names the check, the seed, the backend and every figure recorded so far, and the artifact keeps them.
     */
    public void check(boolean holds) {
        if (!holds) {
            List<String> failing = Figures.evaluate(manifest, check, metrics).stream().filter(f -> !f.holds())
                    .map(Figures.Outcome::failingLine).toList();
            throw new AssertionError((failing.isEmpty() ? "" : String.join("; ", failing) + " — ") + manifest.paper() + "/" + check + " does not hold on seed " + seed + " (" + backend.name()
                    + "): " + metrics + (Double.isNaN(manifest.check(check).threshold()) ? "" : ", threshold " + threshold()));
        }
    }

    /** Records metric {@code name}; it must be declared, finite, and equal to any value recorded before. */
    public SeedRun metric(String name, double value) {
        manifest.metric(name);
        if (!Double.isFinite(value)) {
            throw new IllegalStateException("metric '" + name + "' of seed " + seed + " is " + value + ": metrics must be finite");
        }
        put(metrics, name, value);
        return this;
    }

    /** Records an integer metric, as {@link #metric(String, double)} does. */
    public SeedRun metric(String name, long value) {
        manifest.metric(name);
        put(metrics, name, value);
        return this;
    }

    /** Records a yes/no metric, as {@link #metric(String, double)} does. */
    public SeedRun metric(String name, boolean value) {
        manifest.metric(name);
        put(metrics, name, value);
        return this;
    }

    /** A measured runtime figure (wall time, bytes allocated): recorded, never compared for drift. */
    public SeedRun runtime(String name, Object value) {
        runtime.put(name, value);
        return this;
    }

    /** The SHA-256 (hex) of the dataset bytes this run actually used, under a short name. */
    public SeedRun dataset(String name, String sha256) {
        datasets.put(name, sha256);
        return this;
    }

    /**
     * The checkpoint folder this run read, when it is not the paper's own fixture ({@code -Dmechspec.checkpoint}):
     * its id, revision and the SHA-256 of every file read. The artifact names it, and drift compares within it only.
     */
    public SeedRun checkpoint(String id, String revision, Map<String, String> filesSha256) {
        checkpoint = JSON.createObjectNode().put("id", id).put("revision", revision);
        checkpoint.set("files_sha256", JSON.valueToTree(new java.util.TreeMap<>(filesSha256)));
        return this;
    }

    /**
     * Records every declared baseline's figures for this seed: {@code figures} gives, for a baseline's name, its
     * measured record (one component per declared metric, named like it in camelCase, as {@link #metrics(Record)} reads
     * them). They are reported beside the mechanism's and judge nothing: a baseline shows what the mechanism is
     * compared with.
     */
    public SeedRun baselines(java.util.function.Function<String, ? extends Record> figures) {
        for (Manifest.Baseline base : manifest.baselines()) {
            SeedRun measured = new SeedRun(manifest, check, seed, backend, null);
            measured.metrics(figures.apply(base.name()));
            Map<String, Object> mine = baselines.computeIfAbsent(base.name(), k -> new LinkedHashMap<>());
            measured.metrics.forEach((metric, value) -> put(mine, metric, value));
        }
        return this;
    }

    /** The metrics recorded so far, by name. */
    public Map<String, Object> metrics() {
        return Collections.unmodifiableMap(metrics);
    }

    private void put(Map<String, Object> map, String name, Object value) {
        Object previous = map.put(name, value);
        if (previous != null && !previous.equals(value)) {
            throw new IllegalStateException("metric '" + name + "' of seed " + seed + " recorded twice with different values: "
                    + previous + " then " + value);
        }
    }

    /** The record published to the platform (and read back by the reporter). */
    public String toJson() {
        ObjectNode n = JSON.createObjectNode();
        n.put("paper", manifest.paper());
        n.put("check", check);
        n.put("seed", seed);
        n.put("backend", backend.name());
        n.put("device", backend.device());
        if (!backend.provenance().isEmpty()) {
            n.set("device_provenance", JSON.valueToTree(backend.provenance()));
        }
        n.set("metrics", JSON.valueToTree(metrics));
        n.set("runtime", JSON.valueToTree(runtime));
        n.set("datasets", JSON.valueToTree(datasets));
        if (!baselines.isEmpty()) {
            n.set("baselines", JSON.valueToTree(baselines));
        }
        if (checkpoint != null) {
            n.set("checkpoint", checkpoint);
        }
        if (notJudged != null) {
            n.put(PaperRun.NOT_JUDGED, notJudged);
        }
        return n.toString();
    }

    @Override
    public String toString() {
        return "seed " + seed + " [" + backend.name() + "]";
    }
}
