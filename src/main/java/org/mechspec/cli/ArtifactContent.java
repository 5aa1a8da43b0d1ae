package org.mechspec.cli;

import org.mechspec.report.TemplateForm;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import org.mechspec.report.PaperRun;
import org.mechspec.spec.Manifest;

/**
 * What one artifact says per seed (metric values, check outcomes) and about its run (backend, device, JVM, commit,
 * executed sources), read through the template positions of its paper's manifest. Problems met while reading
 * (wrong types, values that disagree between two places, undeclared checks) are collected as findings.
 */
final class ArtifactContent {
    final Manifest manifest;
    final List<Long> seeds = new ArrayList<>();
    /** seed → metric → Long, Double or Boolean. */
    final Map<Long, Map<String, Object>> metrics = new LinkedHashMap<>();
    /** seed → check → outcome. */
    final Map<Long, Map<String, Boolean>> checks = new LinkedHashMap<>();
    /** seed → where its per-seed entry was read, for messages. */
    final Map<Long, JsonPath> seedOrigin = new LinkedHashMap<>();
    /** "seed/name" → where a metric value, and where a check outcome, was first read (for messages). */
    final Map<String, JsonPath> metricOrigin = new LinkedHashMap<>();
    final Map<String, JsonPath> checkOrigin = new LinkedHashMap<>();
    final List<Finding> findings = new ArrayList<>();
    String backend = "";
    String device = "";
    String jvm = "";
    String commit = "";
    final Map<String, String> sources = new TreeMap<>();
    /** Whether a value's absence is a finding (a seed file need not have what our template adds to its layout). */
    private final Predicate<JsonPath> required;

    private ArtifactContent(Manifest manifest, Predicate<JsonPath> required) {
        this.manifest = manifest;
        this.required = required;
    }

    static ArtifactContent read(Manifest manifest, TemplatePositions template, JsonNode artifact) {
        return read(manifest, template, artifact, path -> true);
    }

    static ArtifactContent read(Manifest manifest, TemplatePositions template, JsonNode artifact, Predicate<JsonPath> required) {
        ArtifactContent c = new ArtifactContent(manifest, required);
        Map<JsonPath, List<Long>> listed = c.listedSeeds(template, artifact);
        List<Long> hint = listed.isEmpty() ? null : listed.values().iterator().next();
        JsonPath firstArray = null;
        List<Long> firstOrder = null;
        for (TemplatePositions.PerSeed p : template.perSeed) {
            List<Long> order = c.readPerSeed(p, artifact, hint);
            if (order == null) {
                continue;
            }
            if (firstOrder == null) {
                firstArray = p.array();
                firstOrder = order;
            } else if (!order.equals(firstOrder)) {
                c.findings.add(Finding.at(p.array(), "holds seeds " + order + " but " + firstArray + " holds " + firstOrder));
            }
        }
        // The per-seed arrays hold the data; every seed list the template places must name the same seeds.
        JsonPath reference = firstArray;
        List<Long> seeds = firstOrder != null ? firstOrder : hint;
        for (Map.Entry<JsonPath, List<Long>> e : listed.entrySet()) {
            if (reference == null) {
                reference = e.getKey();
            } else if (!e.getValue().equals(seeds)) {
                c.findings.add(Finding.at(e.getKey(), "lists seeds " + e.getValue() + " but " + reference + " holds " + seeds));
            }
        }
        if (firstOrder == null && hint != null) {
            c.seeds.addAll(hint);
        }
        c.readFacts(template, artifact);
        return c;
    }

    /** Every {@code $seeds} array of the artifact, by path. */
    private Map<JsonPath, List<Long>> listedSeeds(TemplatePositions template, JsonNode artifact) {
        Map<JsonPath, List<Long>> lists = new LinkedHashMap<>();
        for (TemplatePositions.Position p : template.top(TemplateForm.SEEDS)) {
            JsonNode a = p.path().in(artifact);
            if (a.isMissingNode()) {
                continue;
            }
            List<Long> out = new ArrayList<>();
            if (a.isArray()) {
                a.forEach(s -> {
                    if (s.isIntegralNumber()) {
                        out.add(s.asLong());
                    }
                });
            }
            if (!a.isArray() || out.size() != a.size()) {
                findings.add(Finding.at(p.path(), "expected an array of integer seeds, got " + a));
            } else {
                lists.put(p.path(), out);
            }
        }
        return lists;
    }

    /** Reads one {@code $each_seed} array; returns its seeds in order, or null when it is absent. */
    private List<Long> readPerSeed(TemplatePositions.PerSeed p, JsonNode artifact, List<Long> listed) {
        JsonNode array = p.array().in(artifact);
        if (!array.isArray()) {
            return null; // the layout check names a missing or mistyped array
        }
        List<Long> order = new ArrayList<>();
        Map<Integer, Set<String>> starNames = new LinkedHashMap<>();
        for (int i = 0; i < array.size(); i++) {
            JsonPath at = p.array().index(i);
            JsonNode element = array.get(i);
            if (!element.isObject()) {
                findings.add(Finding.at(at, "expected object, got " + JsonPath.type(element)));
                continue;
            }
            Long seed = seedOf(p, element, at, i, listed);
            if (seed == null) {
                continue;
            }
            if (order.contains(seed)) {
                findings.add(Finding.at(at, "seed " + seed + " appears twice in " + p.array()));
                continue;
            }
            order.add(seed);
            if (!seeds.contains(seed)) {
                seeds.add(seed);
                seedOrigin.put(seed, seedPath(p, at));
            }
            for (TemplatePositions.Position f : p.fields()) {
                readField(seed, f, element, at, starNames.computeIfAbsent(i, k -> new LinkedHashSet<>()));
            }
        }
        reportMetricsMissingOnSomeSeeds(p, starNames);
        return order;
    }

    private static JsonPath seedPath(TemplatePositions.PerSeed p, JsonPath element) {
        return p.fields().stream().filter(f -> f.form() == TemplateForm.SEED).map(f -> element.append(f.path())).findFirst().orElse(element);
    }

    private Long seedOf(TemplatePositions.PerSeed p, JsonNode element, JsonPath at, int i, List<Long> listed) {
        for (TemplatePositions.Position f : p.fields()) {
            if (f.form() == TemplateForm.SEED) {
                JsonNode s = f.path().in(element);
                if (s.isIntegralNumber()) {
                    return s.asLong();
                }
                findings.add(Finding.at(at.append(f.path()), "expected an integer seed, got " + JsonPath.type(s)));
                return null;
            }
        }
        if (listed != null && i < listed.size()) {
            return listed.get(i);
        }
        if (i < manifest.seeds().size()) {
            return manifest.seeds().get(i);
        }
        findings.add(Finding.at(at, "cannot tell which seed this element is"));
        return null;
    }

    private void readField(long seed, TemplatePositions.Position f, JsonNode element, JsonPath at, Set<String> starNames) {
        JsonPath path = at.append(f.path());
        JsonNode n = f.path().in(element);
        switch (f.form()) {
            case METRICS: {
                if (!n.isObject()) {
                    missingOrMistyped(path, n, "per-seed metrics");
                    return;
                }
                boolean all = f.arg().isTextual() && f.arg().asText().equals("*");
                List<String> names = new ArrayList<>();
                if (all) {
                    n.fieldNames().forEachRemaining(names::add);
                    starNames.addAll(names);
                } else {
                    f.arg().forEach(x -> names.add(x.asText()));
                }
                for (String name : names) {
                    if (n.has(name)) { // a listed name without value was not recorded on this run (e.g. CUDA-only)
                        put(seed, name, n.get(name), path.key(name), false, all);
                    }
                }
                return;
            }
            case SEED:
                if (!n.isMissingNode() && !(n.isIntegralNumber() && n.asLong() == seed)) {
                    findings.add(Finding.at(path, n + ", but this element is seed " + seed));
                }
                return;
            case METRIC:
            case CHECK:
                if (n.isMissingNode()) {
                    missing(path, f.form().key() + " " + f.arg().asText());
                } else {
                    put(seed, f.arg().asText(), n, path, false, false);
                }
                return;
            case CHECKS:
                if (!n.isObject()) {
                    missingOrMistyped(path, n, "per-seed checks");
                    return;
                }
                n.fields().forEachRemaining(e -> {
                    if (manifest.checks().containsKey(e.getKey())) {
                        put(seed, e.getKey(), e.getValue(), path.key(e.getKey()), true, false);
                    } else {
                        findings.add(Finding.at(path.key(e.getKey()), "'" + e.getKey() + "' is not a check of " + manifest.paper()));
                    }
                });
                return;
            case BACKEND:
                backend = backend.isEmpty() ? n.asText("") : backend;
                return;
            case DEVICE:
                device = device.isEmpty() ? n.asText("") : device;
                return;
            case JVM:
                jvm = jvm.isEmpty() ? n.asText("") : jvm;
                return;
            default:
        }
    }

    private void missing(JsonPath path, String what) {
        if (required.test(path)) {
            findings.add(Finding.at(path, "missing (" + what + ")"));
        }
    }

    private void missingOrMistyped(JsonPath path, JsonNode n, String what) {
        if (n.isMissingNode()) {
            missing(path, what);
        } else {
            findings.add(Finding.at(path, "expected object, got " + JsonPath.type(n)));
        }
    }

    /**
     * Stores a value of a seed. Check outcomes come from {@code $checks}; elsewhere a name is a metric when the manifest
     * declares one, else a check (as the renderer resolves names). A second place holding the same value must agree.
     */
    private void put(long seed, String name, JsonNode n, JsonPath path, boolean outcome, boolean undeclaredIsData) {
        boolean isMetric = !outcome && manifest.metrics().containsKey(name);
        if (!isMetric && !manifest.checks().containsKey(name)) {
            if (!undeclaredIsData) {
                findings.add(Finding.at(path, "'" + name + "' is neither a metric nor a check of " + manifest.paper()));
            }
            return;
        }
        Object value;
        if (n.isBoolean()) {
            value = n.asBoolean();
        } else if (isMetric && n.isIntegralNumber()) {
            value = n.asLong();
        } else if (isMetric && n.isNumber()) {
            value = n.asDouble();
        } else {
            findings.add(Finding.at(path, "expected " + (isMetric ? "number or boolean" : "boolean") + ", got " + JsonPath.type(n)));
            return;
        }
        String key = seed + "/" + name;
        Map<String, JsonPath> origins = isMetric ? metricOrigin : checkOrigin;
        Object previous = isMetric ? metrics.getOrDefault(seed, Map.of()).get(name) : checks.getOrDefault(seed, Map.of()).get(name);
        if (previous != null) {
            if (!same(previous, value)) {
                findings.add(Finding.at(path, value + " disagrees with " + previous + " at " + origins.get(key)));
            }
            return;
        }
        origins.put(key, path);
        if (isMetric) {
            metrics.computeIfAbsent(seed, s -> new LinkedHashMap<>()).put(name, value);
        } else {
            checks.computeIfAbsent(seed, s -> new LinkedHashMap<>()).put(name, (Boolean) value);
        }
    }

    static boolean same(Object a, Object b) {
        if (a instanceof Number x && b instanceof Number y) {
            return Double.compare(x.doubleValue(), y.doubleValue()) == 0;
        }
        return a.equals(b);
    }

    private void reportMetricsMissingOnSomeSeeds(TemplatePositions.PerSeed p, Map<Integer, Set<String>> starNames) {
        Set<String> union = new LinkedHashSet<>();
        starNames.values().forEach(union::addAll);
        starNames.forEach((i, names) -> {
            for (String name : union) {
                if (!names.contains(name) && manifest.metrics().containsKey(name)) {
                    JsonPath at = p.array().index(i);
                    p.fields().stream().filter(f -> f.form() == TemplateForm.METRICS).findFirst()
                            .map(f -> at.append(f.path()).key(name)).filter(required)
                            .ifPresent(path -> findings.add(Finding.at(path, "missing, though other seeds record it")));
                }
            }
        });
    }

    private void readFacts(TemplatePositions template, JsonNode artifact) {
        for (TemplatePositions.Position p : template.top) {
            JsonNode n = p.path().in(artifact);
            switch (p.form()) {
                case COMMIT -> commit = commit.isEmpty() ? n.asText("") : commit;
                case BACKEND -> backend = backend.isEmpty() ? n.asText("") : backend;
                case DEVICE -> device = device.isEmpty() ? n.asText("") : device;
                case JVM -> jvm = jvm.isEmpty() ? n.asText("") : jvm;
                case SOURCES -> {
                    if (sources.isEmpty() && n.isObject()) {
                        n.fields().forEachRemaining(e -> sources.put(e.getKey(), e.getValue().asText()));
                    }
                }
                default -> {
                }
            }
        }
        JsonNode block = artifact.path("mechspec");
        commit = commit.isEmpty() ? block.path("commit").asText("") : commit;
        backend = backend.isEmpty() ? block.path("backend").asText("") : backend;
        device = device.isEmpty() ? block.path("device").asText("") : device;
    }

    /** The numeric values of a metric over the seeds, in seed order; null when some seed's value is not a number. */
    List<Double> numbers(String metric) {
        List<Double> out = new ArrayList<>();
        for (long seed : seeds) {
            Object v = metrics.getOrDefault(seed, Map.of()).get(metric);
            if (v instanceof Number x) {
                out.add(x.doubleValue());
            } else if (v != null) {
                return null;
            }
        }
        return out;
    }

    /** The per-seed values as a run record, for comparing a foreign artifact (e.g. a seed file) with ours. */
    PaperRun toRun() {
        PaperRun run = new PaperRun(manifest.paper(), backend.isEmpty() ? "unknown" : backend);
        run.device = device;
        for (long seed : seeds) {
            PaperRun.SeedRecord r = run.seed(seed);
            r.metrics.putAll(metrics.getOrDefault(seed, Map.of()));
            r.checks.putAll(checks.getOrDefault(seed, Map.of()));
        }
        return run;
    }
}
