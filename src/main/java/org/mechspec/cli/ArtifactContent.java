package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.mechspec.report.PaperRun;
import org.mechspec.report.TemplateForm;
import org.mechspec.spec.Manifest;

/**
 * What an artifact mechspec did not write (a seed file) says per seed, read through the template positions of its
 * paper's manifest: metric values and check outcomes, each with the place it was first read. Wrong types and
 * undeclared names are findings; missing places are the layout check's, and a second place holding another value is
 * the comparison with the rendering's.
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
    /** Per {@code $each_seed} array (by path): the seed of each element, null where it cannot be told. */
    final Map<JsonPath, List<Long>> elementSeeds = new LinkedHashMap<>();
    final List<Finding> findings = new ArrayList<>();
    private final String backend;
    private final String device;
    private ArtifactContent(Manifest manifest, TemplatePositions template, JsonNode artifact) {
        this.manifest = manifest;
        this.backend = template.first(TemplateForm.BACKEND, artifact).asText("");
        this.device = template.first(TemplateForm.DEVICE, artifact).asText("");
    }

    static ArtifactContent read(Manifest manifest, TemplatePositions template, JsonNode artifact) {
        ArtifactContent c = new ArtifactContent(manifest, template, artifact);
        List<Long> listed = c.listedSeeds(template, artifact);
        for (TemplatePositions.PerSeed p : template.perSeed) {
            c.readPerSeed(p, artifact, listed);
        }
        if (c.seeds.isEmpty() && listed != null) {
            c.seeds.addAll(listed);
        }
        return c;
    }

    /** The first {@code $seeds} array, which names the elements of per-seed arrays that have no {@code $seed} field. */
    private List<Long> listedSeeds(TemplatePositions template, JsonNode artifact) {
        for (TemplatePositions.Position p : template.top(TemplateForm.SEEDS)) {
            JsonNode a = p.path().in(artifact);
            if (a.isArray() && java.util.stream.StreamSupport.stream(a.spliterator(), false).allMatch(JsonNode::isIntegralNumber)) {
                List<Long> out = new ArrayList<>();
                a.forEach(s -> out.add(s.asLong()));
                return out;
            }
            if (!a.isMissingNode()) {
                findings.add(Finding.at(p.path(), "expected an array of integer seeds, got " + a));
            }
        }
        return null;
    }

    private void readPerSeed(TemplatePositions.PerSeed p, JsonNode artifact, List<Long> listed) {
        JsonNode array = p.array().in(artifact);
        List<Long> order = new ArrayList<>();
        elementSeeds.put(p.array(), order);
        for (int i = 0; i < array.size() && array.isArray(); i++) {
            JsonPath at = p.array().index(i);
            JsonNode element = array.get(i);
            Long seed = element.isObject() ? seedOf(p, element, at, i, listed) : null;
            if (!element.isObject()) {
                findings.add(Finding.at(at, "expected object, got " + JsonPath.type(element)));
            } else if (seed != null && order.contains(seed)) {
                findings.add(Finding.at(at, "seed " + seed + " appears twice in " + p.array()));
                seed = null;
            }
            order.add(seed);
            if (seed == null) {
                continue;
            }
            if (!seeds.contains(seed)) {
                seeds.add(seed);
                seedOrigin.put(seed, p.fields().stream().filter(f -> f.form() == TemplateForm.SEED)
                        .map(f -> at.append(f.path())).findFirst().orElse(at));
            }
            for (TemplatePositions.Position f : p.fields()) {
                readField(seed, f, element, at);
            }
        }
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

    private void readField(long seed, TemplatePositions.Position f, JsonNode element, JsonPath at) {
        JsonPath path = at.append(f.path());
        JsonNode n = f.path().in(element);
        boolean object = f.form() == TemplateForm.METRICS || f.form() == TemplateForm.CHECKS;
        if (f.form() != TemplateForm.METRIC && f.form() != TemplateForm.CHECK && !object) {
            return;
        }
        if (n.isMissingNode() || (object && !n.isObject())) {
            return; // the layout check names a missing or mistyped place
        }
        switch (f.form()) {
            case METRICS -> {
                boolean all = f.arg().isTextual() && f.arg().asText().equals("*");
                List<String> names = new ArrayList<>();
                if (all) {
                    n.fieldNames().forEachRemaining(names::add);
                } else {
                    f.arg().forEach(x -> names.add(x.asText()));
                }
                for (String name : names) {
                    if (n.has(name)) { // a listed name without value was not recorded on this run (e.g. CUDA-only)
                        put(seed, name, n.get(name), path.key(name), false, all);
                    }
                }
            }
            case CHECKS -> n.fields().forEachRemaining(e -> {
                if (manifest.checks().containsKey(e.getKey())) {
                    put(seed, e.getKey(), e.getValue(), path.key(e.getKey()), true, false);
                } else {
                    findings.add(Finding.at(path.key(e.getKey()), "'" + e.getKey() + "' is not a check of " + manifest.paper()));
                }
            });
            default -> put(seed, f.arg().path("name").asText(), n, path, false, false);
        }
    }

    /**
     * Stores a value of a seed. Check outcomes come from {@code $checks}; elsewhere a name is a metric when the manifest
     * declares one, else a check (as the renderer resolves names). The first place read holds the value.
     */
    private void put(long seed, String name, JsonNode n, JsonPath path, boolean outcome, boolean undeclaredIsData) {
        boolean isMetric = !outcome && manifest.metrics().containsKey(name);
        if (!isMetric && !manifest.checks().containsKey(name)) {
            if (!undeclaredIsData) {
                findings.add(Finding.at(path, "'" + name + "' is neither a metric nor a check of " + manifest.paper()));
            }
            return;
        }
        Object value = n.isBoolean() ? (Object) n.asBoolean()
                : isMetric && n.isIntegralNumber() ? (Object) n.asLong() : isMetric && n.isNumber() ? (Object) n.asDouble() : null;
        if (value == null) {
            findings.add(Finding.at(path, "expected " + (isMetric ? "number or boolean" : "boolean") + ", got " + JsonPath.type(n)));
        } else if ((isMetric ? metricOrigin : checkOrigin).putIfAbsent(seed + "/" + name, path) == null) {
            if (isMetric) {
                metrics.computeIfAbsent(seed, s -> new LinkedHashMap<>()).put(name, value);
            } else {
                checks.computeIfAbsent(seed, s -> new LinkedHashMap<>()).put(name, (Boolean) value);
            }
        }
    }

    /** The per-seed values as a run record, to render the template again or to compare with another artifact. */
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
