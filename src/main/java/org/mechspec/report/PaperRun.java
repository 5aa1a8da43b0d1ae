package org.mechspec.report;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.mechspec.data.DataFiles;

/**
 * Everything one paper measured on one backend: per seed its metrics, runtime, dataset hashes and check
 * outcomes, plus the outcomes of the property halves. This is the artifact's {@code mechspec} block, the
 * machine-readable part that the gate, {@code merge} and {@code diff} work on.
 */
public final class PaperRun {
    static final ObjectMapper JSON = new ObjectMapper();
    /** Runtime figures of the device work a seed's checks did on CUDA; each check adds its own, so they are summed. */
    public static final String KERNEL_LAUNCHES = "cuda_kernel_launches";
    /** Runtime key: bytes copied to the device for a seed's checks. */
    public static final String BYTES_TO_DEVICE = "cuda_bytes_to_device";
    /** Runtime key: bytes copied back from the device for a seed's checks. */
    public static final String BYTES_FROM_DEVICE = "cuda_bytes_from_device";
    /** Runtime key: device time of a seed's checks, in milliseconds. */
    public static final String DEVICE_MS = "cuda_device_ms";
    /**
     * Key of the checks an outside implementation computed nothing of (check → why): in a seeded record, per seed in
     * the block, and as {@code property_not_judged} for property halves. Such a check is neither held nor failed, so
     * it is left out of {@code checks}; a run without an implementation never writes the key.
     */
    public static final String NOT_JUDGED = "not_judged";
    /** Runtime key: the property halves that judged nothing of the outside implementation. */
    public static final String PROPERTY_NOT_JUDGED = "property_not_judged";
    private static final java.util.Set<String> SUMMED = java.util.Set.of(KERNEL_LAUNCHES, BYTES_TO_DEVICE, BYTES_FROM_DEVICE, DEVICE_MS);

    /** The paper's key. */
    public final String paper;
    /** The backend the run used (cpu, cuda, cuda-emulated or an implementation's id). */
    public final String backend;
    /** The device the run ran on, in one line. */
    public String device = "";
    /** What identifies the code that ran on the device (driver, nvcc, loaded kernel images); empty on CPU. */
    public final ObjectNode deviceProvenance = JSON.createObjectNode();
    /** Each seed's record, by seed. */
    public final TreeMap<Long, SeedRecord> seeds = new TreeMap<>();
    /** Each check's property half: whether it held. */
    public final Map<String, Boolean> propertyChecks = new LinkedHashMap<>();
    /** Property halves that judged nothing of the implementation: check → why (never also in {@link #propertyChecks}). */
    public final Map<String, String> propertyNotJudged = new TreeMap<>();
    /**
     * Why each property half failed (check → its message: QuickTheories' shrunk case), for the summary; not part of the
     * block, which keeps only the outcome.
     */
    public final Map<String, String> propertyFailures = new TreeMap<>();
    /**
     * The checkpoint folder the contracts ran on ({@code id}, {@code revision}, {@code files_sha256}) when one was
     * given with {@code -Dmechspec.checkpoint}; empty for a paper's own fixture. Runs compare only within one checkpoint.
     */
    public final ObjectNode checkpoint = JSON.createObjectNode();

    /** An empty run of {@code paper} on {@code backend}. */
    public PaperRun(String paper, String backend) {
        this.paper = paper;
        this.backend = backend;
    }

    /** One seed's record. Metric values are Double, Long or Boolean. */
    public static final class SeedRecord {
        /** Metric name → value. */
        public final Map<String, Object> metrics = new LinkedHashMap<>();
        /** Runtime facts (device work, timings) by name. */
        public final Map<String, Object> runtime = new LinkedHashMap<>();
        /** Data set file → SHA-256. */
        public final Map<String, String> datasets = new TreeMap<>();
        /** Check name → whether it held on this seed. */
        public final Map<String, Boolean> checks = new LinkedHashMap<>();
        /** Declared baselines' figures on this seed: baseline → metric → value. */
        public final Map<String, Map<String, Object>> baselines = new TreeMap<>();
        /** Checks whose every invocation on this seed judged nothing of the implementation: check → why. */
        public final Map<String, String> notJudged = new TreeMap<>();

        /** A check's outcome: true only if every invocation of it for this seed passed (a judged one outweighs a not-judged one). */
        public void outcome(String check, boolean passed) {
            checks.merge(check, passed, Boolean::logicalAnd);
            notJudged.remove(check);
        }

        /** An invocation that judged nothing: the check stays without an outcome unless another invocation judged it. */
        public void notJudged(String check, String why) {
            if (!checks.containsKey(check)) {
                notJudged.putIfAbsent(check, why);
            }
        }
    }

    /** The record of {@code seed}, created empty on first use. */
    public SeedRecord seed(long seed) {
        return seeds.computeIfAbsent(seed, s -> new SeedRecord());
    }

    /** Adds one published seeded-invocation record (see spec.SeedRun#toJson) with its outcome. */
    public void add(JsonNode entry, boolean passed) {
        device = entry.path("device").asText(device);
        merge(deviceProvenance, entry.path("device_provenance"));
        JsonNode ck = entry.path("checkpoint");
        if (ck.isObject()) {
            if (checkpoint.isEmpty()) {
                checkpoint.setAll((ObjectNode) ck.deepCopy());
            } else if (!checkpoint.equals(ck)) {
                throw new IllegalStateException(paper + ": two checkpoints in one run: " + checkpoint + " and " + ck);
            }
        }
        SeedRecord r = seed(entry.get("seed").asLong());
        entry.path("metrics").fields().forEachRemaining(e -> putMetric(r.metrics, e.getKey(), e.getValue()));
        entry.path("runtime").fields().forEachRemaining(e -> putRuntime(r.runtime, e.getKey(), value(e.getValue())));
        entry.path("datasets").fields().forEachRemaining(e -> r.datasets.put(e.getKey(), e.getValue().asText()));
        entry.path("baselines").fields().forEachRemaining(b -> b.getValue().fields().forEachRemaining(
                m -> putMetric(r.baselines.computeIfAbsent(b.getKey(), k -> new LinkedHashMap<>()), m.getKey(), m.getValue())));
        if (entry.hasNonNull(NOT_JUDGED)) {
            r.notJudged(entry.get("check").asText(), entry.get(NOT_JUDGED).asText());
        } else {
            r.outcome(entry.get("check").asText(), passed);
        }
    }

    /** A property half's outcome: false if any run of it failed; a judged run outweighs a not-judged one. */
    public void propertyOutcome(String check, boolean passed) {
        propertyChecks.merge(check, passed, Boolean::logicalAnd);
        propertyNotJudged.remove(check);
    }

    /** Records that a property half of {@code check} judged nothing of the outside implementation, and why. */
    public void propertyNotJudged(String check, String why) {
        if (!propertyChecks.containsKey(check)) {
            propertyNotJudged.putIfAbsent(check, why);
        }
    }

    /** Adds from's fields to into, object fields recursively (the kernel images loaded so far grow per seed). */
    static void merge(ObjectNode into, JsonNode from) {
        from.fields().forEachRemaining(e -> {
            if (e.getValue().isObject() && into.path(e.getKey()).isObject()) {
                merge((ObjectNode) into.get(e.getKey()), e.getValue());
            } else {
                into.set(e.getKey(), e.getValue().deepCopy());
            }
        });
    }

    private static void putRuntime(Map<String, Object> runtime, String name, Object value) {
        Object previous = runtime.get(name);
        if (SUMMED.contains(name) && previous instanceof Number a && value instanceof Number b) {
            runtime.put(name, a instanceof Long && b instanceof Long ? (Object) (a.longValue() + b.longValue()) : (Object) (a.doubleValue() + b.doubleValue()));
        } else {
            runtime.put(name, value);
        }
    }

    private static void putMetric(Map<String, Object> metrics, String name, JsonNode v) {
        Object value = value(v);
        Object previous = metrics.put(name, value);
        if (previous != null && !previous.equals(value)) {
            throw new IllegalStateException("metric '" + name + "' recorded with different values by two checks of one seed: "
                    + previous + " and " + value);
        }
    }

    static Object value(JsonNode v) {
        if (v.isBoolean()) {
            return v.asBoolean();
        }
        if (v.isIntegralNumber()) {
            return v.asLong();
        }
        if (v.isNumber()) {
            return v.asDouble();
        }
        return v.asText();
    }

    /**
     * A check's verdict on a seed: false when a half failed, null when it was not judged there (the seeded half judged
     * nothing of the implementation, and no half failed), else true.
     */
    public Boolean verdict(long seed, String check) {
        if (Boolean.FALSE.equals(propertyChecks.get(check)) || Boolean.FALSE.equals(seeds.get(seed).checks.get(check))) {
            return false;
        }
        return seeds.get(seed).checks.containsKey(check) ? Boolean.TRUE : null;
    }

    /** Seeded outcome AND the property half's outcome, when there is one. */
    public boolean checkOutcome(long seed, String check) {
        Boolean seeded = seeds.get(seed).checks.get(check);
        Boolean property = propertyChecks.get(check);
        return Boolean.TRUE.equals(seeded) && !Boolean.FALSE.equals(property);
    }

    /** The run as JSON (its records' hash goes into the artifact's provenance). */
    public ObjectNode toJson() {
        ObjectNode n = JSON.createObjectNode();
        n.put("paper", paper);
        n.put("backend", backend);
        n.put("device", device);
        if (!deviceProvenance.isEmpty()) {
            n.set("device_provenance", deviceProvenance.deepCopy());
        }
        if (!checkpoint.isEmpty()) {
            n.set("checkpoint", checkpoint.deepCopy());
        }
        ObjectNode s = n.putObject("seeds");
        seeds.forEach((seed, r) -> {
            ObjectNode o = s.putObject(Long.toString(seed));
            o.set("metrics", JSON.valueToTree(r.metrics));
            ObjectNode checks = o.putObject("checks");
            r.checks.keySet().forEach(c -> checks.put(c, checkOutcome(seed, c)));
            o.set("runtime", JSON.valueToTree(r.runtime));
            o.set("datasets", JSON.valueToTree(r.datasets));
            if (!r.notJudged.isEmpty()) {
                o.set(NOT_JUDGED, JSON.valueToTree(r.notJudged));
            }
            if (!r.baselines.isEmpty()) {
                o.set("baselines", JSON.valueToTree(r.baselines));
            }
        });
        n.set("property_checks", JSON.valueToTree(propertyChecks));
        if (!propertyNotJudged.isEmpty()) {
            n.set(PROPERTY_NOT_JUDGED, JSON.valueToTree(propertyNotJudged));
        }
        return n;
    }

    /**
     * Where this run's committed reference lives under reports/: {@code paper.backend.json} for the paper's own
     * fixture, {@code checkpoints/<id>-<hash>/paper.backend.json} for a given checkpoint (hash: the first 12 hex of the
     * SHA-256 of its sorted {@code name=sha256} lines), so a checkpoint run never replaces or meets another's reference.
     */
    public String referenceName() {
        String file = paper + "." + backend + ".json";
        if (checkpoint.isEmpty()) {
            return file;
        }
        StringBuilder lines = new StringBuilder();
        new TreeMap<String, String>(JSON.convertValue(checkpoint.path("files_sha256"),
                new TypeReference<Map<String, String>>() { }))
                .forEach((name, sha) -> lines.append(name).append('=').append(sha).append('\n'));
        String id = checkpoint.path("id").asText("checkpoint").toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9.]+", "-");
        String hash = DataFiles.sha256(lines.toString().getBytes(StandardCharsets.UTF_8));
        return "checkpoints/" + id + "-" + hash.substring(0, 12) + "/" + file;
    }

    /** Reads a {@code mechspec} block back (for merge and diff). */
    public static PaperRun fromJson(JsonNode n) {
        PaperRun run = new PaperRun(n.path("paper").asText(), n.path("backend").asText());
        run.device = n.path("device").asText("");
        merge(run.deviceProvenance, n.path("device_provenance"));
        merge(run.checkpoint, n.path("checkpoint"));
        n.path("seeds").fields().forEachRemaining(e -> {
            SeedRecord r = run.seed(Long.parseLong(e.getKey()));
            e.getValue().path("metrics").fields().forEachRemaining(m -> r.metrics.put(m.getKey(), value(m.getValue())));
            e.getValue().path("checks").fields().forEachRemaining(c -> r.checks.put(c.getKey(), c.getValue().asBoolean()));
            e.getValue().path("runtime").fields().forEachRemaining(m -> r.runtime.put(m.getKey(), value(m.getValue())));
            e.getValue().path("datasets").fields().forEachRemaining(m -> r.datasets.put(m.getKey(), m.getValue().asText()));
            e.getValue().path(NOT_JUDGED).fields().forEachRemaining(m -> r.notJudged(m.getKey(), m.getValue().asText()));
            e.getValue().path("baselines").fields().forEachRemaining(b -> b.getValue().fields().forEachRemaining(
                    m -> r.baselines.computeIfAbsent(b.getKey(), k -> new LinkedHashMap<>()).put(m.getKey(), value(m.getValue()))));
        });
        n.path("property_checks").fields().forEachRemaining(e -> run.propertyChecks.put(e.getKey(), e.getValue().asBoolean()));
        n.path(PROPERTY_NOT_JUDGED).fields().forEachRemaining(e -> run.propertyNotJudged(e.getKey(), e.getValue().asText()));
        return run;
    }
}
