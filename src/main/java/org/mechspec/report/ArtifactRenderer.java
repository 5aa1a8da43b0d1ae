package org.mechspec.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.mechspec.data.DataFiles;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestException;

/**
 * Renders a manifest's artifact template (contracts/README.md) with one paper-backend run, and appends the
 * {@code mechspec} block. Static parts come from the template; everything dynamic from the run.
 */
public final class ArtifactRenderer {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;

    private final Manifest manifest;
    private final PaperRun run;
    private final String commit;
    private final Map<String, String> sources;
    private final String jvm;
    private final ObjectNode block;
    /** Render a value the run lacks as null instead of refusing (see {@link #renderWhatTheRunHolds}). */
    private boolean partial;

    /** Renders a run made in this JVM, with the source fingerprints recorded at build time. */
    public ArtifactRenderer(Manifest manifest, PaperRun run, SourceFingerprints.Recorded fingerprints) {
        this(manifest, run, fingerprints.commit(), fingerprints.under(manifest.sources()),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    }

    /**
     * Renders a run made elsewhere (e.g. shards joined by {@code mechspec merge}) with the commit, executed-source
     * hashes and JVM those runs recorded, instead of this process's.
     */
    public ArtifactRenderer(Manifest manifest, PaperRun run, String commit, Map<String, String> sources, String jvm) {
        this.manifest = manifest;
        this.run = run;
        this.commit = commit;
        this.sources = sources;
        this.jvm = jvm;
        this.block = run.toJson();
        block.put("manifest_sha256", DataFiles.sha256(manifest.root().toString().getBytes(StandardCharsets.UTF_8)));
        block.put("commit", commit);
    }

    /**
     * Renders with the manifest hash an artifact recorded instead of this manifest's, so its records hash compares the
     * block as it was written: an edited manifest is then its own finding, never "the block was changed".
     */
    public ArtifactRenderer recordedManifestSha256(String sha256) {
        block.put("manifest_sha256", sha256);
        return this;
    }

    /** The artifact: the manifest's template with every form filled in from the run. */
    public ObjectNode render() {
        JsonNode out = render(manifest.artifact(), null);
        if (!out.isObject()) {
            throw new ManifestException(manifest.file() + ": field 'artifact' must render to an object");
        }
        ObjectNode artifact = (ObjectNode) out;
        if (!manifest.baselines().isEmpty()) {
            // Beside the mechanism's figures, whatever the template: each declared baseline's, per seed.
            ObjectNode baselines = artifact.putObject("baselines");
            for (Manifest.Baseline base : manifest.baselines()) {
                ObjectNode o = baselines.putObject(base.name());
                o.put("description", base.description());
                ObjectNode perSeed = o.putObject("per_seed");
                run.seeds.forEach((seed, r) -> perSeed.set(Long.toString(seed), PaperRun.JSON.valueToTree(r.baselines.getOrDefault(base.name(), Map.of()))));
            }
        }
        artifact.set("mechspec", block);
        return artifact;
    }

    /**
     * The rendering with null wherever the run has no value the template places: for reading back an artifact
     * mechspec did not write (a seed file), whose seeds need not record everything this template adds.
     */
    public ObjectNode renderWhatTheRunHolds() {
        partial = true;
        try {
            return render();
        } finally {
            partial = false;
        }
    }

    private JsonNode render(JsonNode t, Long seed) {
        if (t.isTextual() && t.asText().startsWith("$")) {
            return scalarForm(t.asText(), seed);
        }
        if (t.isArray()) {
            ArrayNode a = F.arrayNode();
            t.forEach(e -> a.add(render(e, seed)));
            return a;
        }
        if (!t.isObject()) {
            return t.deepCopy();
        }
        if (t.size() == 1) {
            String key = t.fieldNames().next();
            if (key.startsWith("$")) {
                return objectForm(key, t.get(key), seed);
            }
        }
        ObjectNode o = F.objectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = t.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            o.set(e.getKey(), render(e.getValue(), seed));
        }
        return o;
    }

    private JsonNode scalarForm(String key, Long seed) {
        TemplateForm form = TemplateForm.of(key, false);
        if (form == null) {
            throw new ManifestException(manifest.file() + ": unknown template form '" + key + "'");
        }
        switch (form) {
            case SEEDS: {
                ArrayNode a = F.arrayNode();
                run.seeds.keySet().forEach(a::add);
                return a;
            }
            case SEED:
                return F.numberNode(requireSeed(form, seed));
            case FIRST_SEED:
                return F.numberNode(run.seeds.firstKey());
            case CHECKS: {
                ObjectNode o = F.objectNode();
                long s = requireSeed(form, seed);
                for (String check : manifest.checks().keySet()) {
                    if (run.seeds.get(s).checks.containsKey(check)) {
                        o.put(check, run.checkOutcome(s, check));
                    }
                }
                return o;
            }
            case RUNTIME:
                return PaperRun.JSON.valueToTree(run.seeds.get(requireSeed(form, seed)).runtime);
            case NEGATIVE_RESULT:
                return F.textNode(ClaimPolicy.negativeResult(manifest, perSeedMetrics()));
            case CLAIMS_IMPROVEMENT:
                return F.booleanNode(ClaimPolicy.claimsImprovement(manifest, perSeedMetrics()));
            case GPU_VALIDATED:
                return F.booleanNode(gpuValidated());
            case BACKEND:
                return F.textNode(run.backend);
            case DEVICE:
                return F.textNode(run.device);
            case JVM:
                return F.textNode(jvm);
            case COMMIT:
                return F.textNode(commit);
            case DATASET_FINGERPRINT:
                return F.textNode(datasetFingerprint());
            case SOURCES:
                return PaperRun.JSON.valueToTree(sources);
            case RECORDS_SHA256:
                return F.textNode(DataFiles.sha256(block.toString().getBytes(StandardCharsets.UTF_8)));
            case ARTIFACT_PATH:
                return F.textNode("reports/" + run.referenceName());
            case CHECKPOINT:
                if (run.checkpoint.isEmpty()) {
                    throw new IllegalStateException(run.paper + ": the template places $checkpoint, but no checkpoint was given");
                }
                return run.checkpoint.deepCopy();
            default:
                throw new ManifestException(manifest.file() + ": template form '" + key + "' in the wrong place");
        }
    }

    private JsonNode objectForm(String key, JsonNode arg, Long seed) {
        TemplateForm form = TemplateForm.of(key, true);
        if (form == null) {
            throw new ManifestException(manifest.file() + ": unknown template form '" + key + "'");
        }
        switch (form) {
            case EACH_SEED: {
                ArrayNode a = F.arrayNode();
                run.seeds.keySet().forEach(s -> a.add(render(arg, s)));
                return a;
            }
            case METRICS: {
                long s = requireSeed(form, seed);
                ObjectNode o = F.objectNode();
                for (String name : names(arg, manifest.metrics().keySet())) {
                    Object v = seedValue(s, name);
                    if (v != null) {
                        o.set(name, PaperRun.JSON.valueToTree(v));
                    }
                }
                return o;
            }
            case METRIC:
            case CHECK: {
                // {"name": n} inside $each_seed; {"name": n, "seed": 42 | "first"} anywhere, for one seed's value.
                String name = arg.path("name").asText("");
                if (!arg.isObject() || name.isEmpty()) {
                    throw new ManifestException(manifest.file() + ": " + key + " takes {\"name\": ..., \"seed\": ...}, got " + arg);
                }
                long s = !arg.has("seed") ? requireSeed(form, seed)
                        : arg.path("seed").asText().equals("first") ? run.seeds.firstKey() : arg.path("seed").asLong();
                if (partial && (!run.seeds.containsKey(s) || seedValue(s, name) == null)) {
                    return F.nullNode();
                }
                if (!run.seeds.containsKey(s)) {
                    throw new IllegalStateException(run.paper + ": seed " + s + " did not run, so '" + name + "' has no value");
                }
                if (form == TemplateForm.CHECK && run.verdict(s, name) == null && run.seeds.get(s).notJudged.containsKey(name)) {
                    return F.nullNode(); // no verdict: the block's not_judged says why
                }
                Object v = seedValue(s, name);
                if (v == null) {
                    throw new IllegalStateException(run.paper + ": seed " + s + " has no value for '" + name + "'");
                }
                return PaperRun.JSON.valueToTree(v);
            }
            case MANIFEST: {
                // The manifest's own field (a dotted path), so the template never repeats the manifest's text.
                JsonNode v = manifest.root();
                for (String part : arg.asText().split("\\.")) {
                    v = v.path(part);
                }
                if (v.isMissingNode() || arg.asText().isEmpty()) {
                    throw new ManifestException(manifest.file() + ": {\"$manifest\": \"" + arg.asText() + "\"} names no field of the manifest");
                }
                return v.deepCopy();
            }
            case AGGREGATE: {
                ObjectNode o = F.objectNode();
                for (String name : names(arg.path("metrics"), manifest.metrics().keySet())) {
                    List<Object> values = values(name);
                    if (values.isEmpty() || !(values.get(0) instanceof Number)) {
                        continue;
                    }
                    ObjectNode stats = o.putObject(name);
                    statKeys(arg.path("stats")).forEach((as, stat) -> stats.set(as, statistic(values, stat)));
                }
                return o;
            }
            case STAT: {
                List<Object> values = values(arg.path("metric").asText());
                if (values.isEmpty() && partial) {
                    return F.nullNode();
                }
                if (values.isEmpty()) {
                    throw new IllegalStateException(run.paper + ": no values for metric '" + arg.path("metric").asText() + "'");
                }
                return statistic(values, arg.path("stat").asText());
            }
            default:
                throw new ManifestException(manifest.file() + ": template form '" + key + "' in the wrong place");
        }
    }

    /**
     * The statistics of an {@code $aggregate}, by the key each is written under: a name ({@code "std"}) is written
     * under itself, a one-key object ({@code {"sample_std": "std"}}) under its key, for a layout that names it so.
     */
    public static Map<String, String> statKeys(JsonNode stats) {
        Map<String, String> out = new LinkedHashMap<>();
        stats.forEach(s -> {
            if (s.isObject() && s.size() == 1) {
                out.put(s.fieldNames().next(), s.elements().next().asText());
            } else {
                out.put(s.asText(), s.asText());
            }
        });
        return out;
    }

    private Object seedValue(long seed, String name) {
        PaperRun.SeedRecord r = run.seeds.get(seed);
        if (r.metrics.containsKey(name)) {
            return r.metrics.get(name);
        }
        if (r.checks.containsKey(name)) {
            return run.checkOutcome(seed, name);
        }
        return null;
    }

    /** A metric's value on every seed that recorded it, in seed order. */
    private List<Object> values(String name) {
        List<Object> out = new ArrayList<>();
        run.seeds.values().forEach(r -> {
            if (r.metrics.containsKey(name)) {
                out.add(r.metrics.get(name));
            }
        });
        return out;
    }

    private JsonNode statistic(List<Object> values, String stat) {
        List<Double> xs = values.stream().map(v -> ((Number) v).doubleValue()).toList();
        boolean integral = values.stream().allMatch(v -> v instanceof Long);
        double value;
        try {
            value = Statistics.byName(stat, xs);
        } catch (IllegalArgumentException e) {
            throw new ManifestException(manifest.file() + ": " + e.getMessage());
        }
        if (stat.equals("n")) {
            return F.numberNode(xs.size());
        }
        // Integer metrics keep integer mean/min/max where exact (byte counts stay 15108, not 15108.0).
        boolean location = stat.equals("mean") || stat.equals("min") || stat.equals("max");
        if (location && integral && value == Math.rint(value) && Math.abs(value) < 0x1p53) {
            return F.numberNode((long) value);
        }
        return F.numberNode(value);
    }

    /** True only for a CUDA run in which every check that ran passed, on every seed. */
    private boolean gpuValidated() {
        if (!run.backend.equals("cuda") || run.seeds.isEmpty()) {
            return false;
        }
        for (Map.Entry<Long, PaperRun.SeedRecord> e : run.seeds.entrySet()) {
            for (String check : e.getValue().checks.keySet()) {
                if (!run.checkOutcome(e.getKey(), check)) {
                    return false;
                }
            }
        }
        return true;
    }

    private Map<Long, Map<String, Object>> perSeedMetrics() {
        Map<Long, Map<String, Object>> out = new LinkedHashMap<>();
        run.seeds.forEach((s, r) -> out.put(s, r.metrics));
        return out;
    }

    private String datasetFingerprint() {
        Map<String, String> all = new java.util.TreeMap<>();
        run.seeds.values().forEach(r -> all.putAll(r.datasets));
        if (all.isEmpty()) {
            return "sha256:" + DataFiles.sha256(manifest.root().path("dataset").toString().getBytes(StandardCharsets.UTF_8));
        }
        if (all.size() == 1) {
            return "sha256:" + all.values().iterator().next();
        }
        StringBuilder lines = new StringBuilder();
        all.forEach((k, v) -> lines.append(k).append('=').append(v).append('\n'));
        return "sha256:" + DataFiles.sha256(lines.toString().getBytes(StandardCharsets.UTF_8));
    }

    private List<String> names(JsonNode arg, Iterable<String> all) {
        List<String> out = new ArrayList<>();
        if (arg.isMissingNode() || (arg.isTextual() && arg.asText().equals("*"))) {
            all.forEach(out::add);
        } else if (arg.isArray()) {
            arg.forEach(n -> out.add(n.asText()));
        } else {
            throw new ManifestException(manifest.file() + ": a metric list must be \"*\" or an array of names, got " + arg);
        }
        return out;
    }

    private long requireSeed(TemplateForm form, Long seed) {
        if (seed == null) {
            throw new ManifestException(manifest.file() + ": template form '" + form.key() + "' is only valid inside $each_seed");
        }
        return seed;
    }
}
