package org.mechspec.spec;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads and validates manifests. A malformed manifest is rejected with a message naming the file and field.
 * Manifests come from {@code -Dmechspec.contracts.dir} when set, else from the classpath ({@code contracts/}).
 * With {@code -Dmechspec.checkpoint=DIR}, a manifest's {@code checkpoint_protocol} (the paper's setting on a given
 * Hugging Face checkpoint) replaces its checkpoint, dataset, protocol, limitations and artifact fields.
 */
public final class ManifestLoader {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Map<String, Manifest> CACHE = new ConcurrentHashMap<>();
    /** The system property naming a checkpoint folder to run on instead of a paper's own fixture. */
    public static final String CHECKPOINT_PROPERTY = "mechspec.checkpoint";
    /** What a {@code checkpoint_protocol} may replace: never the checks, metrics or hypotheses. */
    private static final List<String> CHECKPOINT_PROTOCOL_FIELDS =
            List.of("checkpoint", "dataset", "protocol", "limitations", "artifact");

    private ManifestLoader() {
    }

    /**
     * The manifest of a paper, loaded once per JVM and checkpoint: with {@code -Dmechspec.checkpoint} set, its
     * {@code checkpoint_protocol} applied ({@link #forCheckpoint}).
     */
    public static Manifest forPaper(String paper) {
        boolean checkpoint = checkpoint().isPresent();
        return CACHE.computeIfAbsent(paper + (checkpoint ? "@checkpoint" : ""),
                key -> checkpoint ? forCheckpoint(locate(paper)) : locate(paper));
    }

    /** The manifest as written, its {@code checkpoint_protocol} not applied: for tests of a paper's own fixture. */
    public static Manifest base(String paper) {
        return CACHE.computeIfAbsent(paper, ManifestLoader::locate);
    }

    /** The checkpoint folder this JVM runs the contracts on ({@code -Dmechspec.checkpoint}), if one is given. */
    public static Optional<Path> checkpoint() {
        String dir = System.getProperty(CHECKPOINT_PROPERTY, "");
        return dir.isBlank() ? Optional.empty() : Optional.of(Path.of(dir));
    }

    /**
     * The manifest with its {@code checkpoint_protocol} applied: objects merge key by key (recursively), except those
     * at a {@code free_keys} path (their keys are data: a checkpoint's files), a null removes the field, anything
     * else replaces it. A manifest without one is returned as it is (its paper reads no checkpoint).
     */
    public static Manifest forCheckpoint(Manifest m) {
        JsonNode overlay = m.root().path("checkpoint_protocol");
        if (overlay.isMissingNode()) {
            return m;
        }
        ObjectNode root = m.root().deepCopy();
        root.remove("checkpoint_protocol");
        overlay(root, overlay, "", m.freeKeys());
        return parse(m.file() + " (checkpoint_protocol)", root.toString());
    }

    private static void overlay(ObjectNode into, JsonNode from, String at,
                                List<String> freeKeys) {
        from.fields().forEachRemaining(e -> {
            JsonNode mine = into.get(e.getKey());
            String path = at.isEmpty() ? e.getKey() : at + "." + e.getKey();
            if (e.getValue().isNull()) {
                into.remove(e.getKey());
            } else if (e.getValue().isObject() && mine != null && mine.isObject() && !freeKeys.contains(path)) {
                overlay((ObjectNode) mine, e.getValue(), path, freeKeys);
            } else {
                into.set(e.getKey(), e.getValue().deepCopy());
            }
        });
    }

    private static Manifest locate(String paper) {
        String dir = System.getProperty("mechspec.contracts.dir", "");
        if (!dir.isBlank()) {
            Path p = Path.of(dir, paper + ".json");
            if (!Files.isRegularFile(p)) {
                throw new ManifestException(p + ": no manifest for paper '" + paper + "'");
            }
            return load(p);
        }
        String resource = "contracts/" + paper + ".json";
        try (InputStream in = ManifestLoader.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new ManifestException(resource + ": no manifest for paper '" + paper + "' on the classpath");
            }
            return parse(resource, new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new ManifestException(resource + ": cannot read: " + e.getMessage(), e);
        }
    }

    /** Every manifest in a folder, sorted by file name. */
    public static List<Manifest> loadAll(Path dir) {
        List<Manifest> out = new ArrayList<>();
        try (var files = Files.list(dir)) {
            files.filter(p -> p.toString().endsWith(".json")).sorted().forEach(p -> out.add(load(p)));
        } catch (IOException e) {
            throw new ManifestException(dir + ": cannot list manifests: " + e.getMessage(), e);
        }
        return out;
    }

    /** The manifest in {@code file}, validated. */
    public static Manifest load(Path file) {
        try {
            return parse(file.toString(), Files.readString(file));
        } catch (IOException e) {
            throw new ManifestException(file + ": cannot read: " + e.getMessage(), e);
        }
    }

    /** The manifest in {@code text}, validated; {@code file} names it in messages. */
    public static Manifest parse(String file, String text) {
        JsonNode root;
        try {
            root = JSON.readTree(text);
        } catch (JsonProcessingException e) {
            // Some errors (nesting too deep) carry no location.
            throw new ManifestException(file + ": invalid JSON" + (e.getLocation() == null ? "" : " at line " + e.getLocation().getLineNr())
                    + ": " + e.getOriginalMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new ManifestException(file + ": the manifest must be a JSON object");
        }
        Fields f = new Fields(file, root);
        String paper = f.string(root, "paper");
        if (!paper.matches("[a-z0-9-]+")) {
            throw new ManifestException(file + ": field 'paper' must be lower-case letters, digits and '-', got '" + paper + "'");
        }
        List<Long> seeds = new ArrayList<>();
        JsonNode seedArray = f.array(root, "seeds");
        if (seedArray.isEmpty()) {
            throw new ManifestException(file + ": field 'seeds' must not be empty");
        }
        for (int i = 0; i < seedArray.size(); i++) {
            if (!seedArray.get(i).canConvertToLong() || !seedArray.get(i).isIntegralNumber()) {
                throw new ManifestException(file + ": field 'seeds[" + i + "]' must be an integer");
            }
            seeds.add(seedArray.get(i).asLong());
        }
        Map<String, Manifest.Check> checks = new LinkedHashMap<>();
        JsonNode checkArray = f.array(root, "checks");
        for (int i = 0; i < checkArray.size(); i++) {
            JsonNode c = checkArray.get(i);
            String at = "checks[" + i + "]";
            String name = f.string(c, "name", at);
            double threshold = c.has("threshold") ? f.number(c, "threshold", at) : Double.NaN;
            List<String> regimes = c.has("regimes") ? f.strings(c, "regimes") : List.of();
            List<String> judges = c.has("judges") ? f.strings(c, "judges") : List.of();
            if (checks.put(name, new Manifest.Check(name, threshold, f.string(c, "description", at), regimes, judges)) != null) {
                throw new ManifestException(file + ": field '" + at + ".name' repeats check '" + name + "'");
            }
        }
        for (int i = 0; i < checkArray.size(); i++) {
            figures(file, checkArray.get(i).path("figures"), "checks[" + i + "].figures", root);
        }
        JsonNode defaults = root.path("default_tolerance");
        double defAbs = defaults.isMissingNode() ? 0.0 : f.number(defaults, "abs", "default_tolerance");
        double defRel = defaults.isMissingNode() ? 1e-9 : f.number(defaults, "rel", "default_tolerance");
        Map<String, Manifest.Metric> metrics = new LinkedHashMap<>();
        JsonNode metricArray = f.array(root, "metrics");
        for (int i = 0; i < metricArray.size(); i++) {
            JsonNode m = metricArray.get(i);
            String at = "metrics[" + i + "]";
            String name = f.string(m, "name", at);
            JsonNode tol = m.path("tolerance");
            double abs = tol.isMissingNode() ? defAbs : f.number(tol, "abs", at + ".tolerance");
            double rel = tol.isMissingNode() ? defRel : f.number(tol, "rel", at + ".tolerance");
            if (abs < 0 || rel < 0) {
                throw new ManifestException(file + ": field '" + at + ".tolerance' must not be negative");
            }
            if (metrics.put(name, new Manifest.Metric(name, abs, rel)) != null) {
                throw new ManifestException(file + ": field '" + at + ".name' repeats metric '" + name + "'");
            }
        }
        if (root.has("implementation_errors")) {
            for (String m : f.strings(root, "implementation_errors")) {
                if (!metrics.containsKey(m)) {
                    throw new ManifestException(file + ": field 'implementation_errors' names undeclared metric '" + m + "'");
                }
            }
        }
        if (root.has("headline")) {
            for (String h : f.strings(root, "headline")) {
                if (!metrics.containsKey(h)) {
                    throw new ManifestException(file + ": field 'headline' names undeclared metric '" + h + "'");
                }
            }
        }
        List<Manifest.Hypothesis> hypotheses = new ArrayList<>();
        JsonNode hyps = root.path("hypotheses");
        if (!hyps.isMissingNode()) {
            if (!hyps.isArray()) {
                throw new ManifestException(file + ": field 'hypotheses' must be an array");
            }
            for (int i = 0; i < hyps.size(); i++) {
                String at = "hypotheses[" + i + "]";
                String lhs = f.string(hyps.get(i), "lhs", at);
                String rhs = f.string(hyps.get(i), "rhs", at);
                for (String side : List.of(lhs, rhs)) {
                    if (!metrics.containsKey(side)) {
                        throw new ManifestException(file + ": field '" + at + "' names undeclared metric '" + side + "'");
                    }
                }
                hypotheses.add(new Manifest.Hypothesis(lhs, rhs, f.string(hyps.get(i), "sentence", at)));
            }
        }
        String caveat = root.path("hypothesis_caveat").asText("");
        f.string(root, "title");
        f.object(root, "dataset");
        f.object(root, "protocol");
        if (root.has("checkpoint_protocol")) {
            f.object(root, "checkpoint_protocol").fieldNames().forEachRemaining(name -> {
                if (!CHECKPOINT_PROTOCOL_FIELDS.contains(name)) {
                    throw new ManifestException(file + ": field 'checkpoint_protocol." + name
                            + "' is not one a checkpoint may replace " + CHECKPOINT_PROTOCOL_FIELDS);
                }
            });
        }
        f.object(root, "claim_policy");
        f.array(root, "limitations");
        List<String> sources = f.strings(root, "sources");
        if (root.has("package") && !f.string(root, "package").matches("[a-z_][a-z0-9_]*(\\.[a-z_][a-z0-9_]*)*")) {
            throw new ManifestException(file + ": field 'package' must be a Java package name, e.g. org.example.mypaper");
        }
        List<String> operations = DeclaredOperations.read(file, paper, root.path("operations"));
        DeclaredOperations.baselines(file, root.path("baselines"));
        for (Manifest.Check c : checks.values()) {
            for (String op : c.judges()) {
                // A misspelt operation is never answered: every verdict of its check would read "not judged".
                if (!operations.contains(op)) {
                    throw new ManifestException(file + ": check '" + c.name() + "' judges '" + op + "', which is not one of the paper's "
                            + "operations " + operations);
                }
            }
        }
        List<String> freeKeys = root.has("free_keys") ? f.strings(root, "free_keys") : List.of();
        String seedArtifact = root.path("seed_artifact").asText("");
        if (!root.has("artifact") && !seedArtifact.isEmpty()) {
            throw new ManifestException(file + ": field 'artifact' is required with a seed_artifact (the template must give its layout)");
        }
        JsonNode artifact = root.has("artifact") ? f.object(root, "artifact") : DEFAULT_TEMPLATE;
        return new Manifest(file, paper, root.path("arxiv_id").asText(""), root.get("title").asText(),
                List.copyOf(seeds), checks, metrics, List.copyOf(hypotheses), caveat, sources, seedArtifact,
                freeKeys, artifact, root);
    }

    /**
     * A check's {@code figures}: each {@code {"metric": m, "op": "<=|>=|<|>|=", "bound": "threshold" | "-threshold" |
     * number | metric, or a product of those with '*'}}, the measured figure against its bound as a reviewer reads it.
     */
    private static void figures(String file, JsonNode figures, String at, JsonNode root) {
        if (figures.isMissingNode()) {
            return;
        }
        java.util.Set<String> metrics = new java.util.HashSet<>();
        root.path("metrics").forEach(m -> metrics.add(m.path("name").asText()));
        if (!figures.isArray()) {
            throw new ManifestException(file + ": field '" + at + "' must be an array");
        }
        for (JsonNode f : figures) {
            String metric = f.path("metric").asText("");
            if (!metrics.contains(metric)) {
                throw new ManifestException(file + ": field '" + at + "' names undeclared metric '" + metric + "'");
            }
            if (!List.of("<=", ">=", "<", ">", "=").contains(f.path("op").asText(""))) {
                throw new ManifestException(file + ": field '" + at + ".op' must be one of <=, >=, <, >, =; got " + f.path("op"));
            }
            for (String factor : f.path("bound").asText("").split("\\*")) {
                String x = factor.trim();
                if (!(x.equals("threshold") || x.equals("-threshold") || metrics.contains(x) || x.matches("-?[0-9.eE+-]+"))) {
                    throw new ManifestException(file + ": field '" + at + ".bound' has factor '" + x
                            + "': use numbers, threshold, -threshold or metric names joined by *");
                }
            }
        }
    }

    /**
     * The template of a paper without a seed artifact and without its own: the manifest's description, per seed its
     * metrics, checks and runtime, the aggregates, the limitations and the provenance (contracts/README.md).
     */
    static final JsonNode DEFAULT_TEMPLATE = parse("""
            {"paper": {"$manifest": "paper"}, "title": {"$manifest": "title"}, "dataset": {"$manifest": "dataset"},
             "protocol": {"$manifest": "protocol"}, "seeds": "$seeds",
             "per_seed": {"$each_seed": {"seed": "$seed", "metrics": {"$metrics": "*"}, "checks": "$checks",
                                         "runtime": "$runtime", "backend": "$backend", "device": "$device"}},
             "metrics": {"$aggregate": {"stats": ["mean", "std", "n", "ci95_t"], "metrics": "*"}},
             "negative_result": "$negative_result", "claim_policy": {"$manifest": "claim_policy"},
             "limitations": {"$manifest": "limitations"},
             "provenance": {"commit": "$commit", "artifact_path": "$artifact_path", "jvm": "$jvm",
                            "executed_source_sha256": "$sources", "records_sha256": "$records_sha256",
                            "dataset_fingerprint": "$dataset_fingerprint"}}
            """);

    private static JsonNode parse(String json) {
        try {
            return new com.fasterxml.jackson.databind.ObjectMapper().readTree(json);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Field accessors that throw with the file and field named. */
    private record Fields(String file, JsonNode root) {
        String string(JsonNode n, String field) {
            return string(n, field, "");
        }

        String string(JsonNode n, String field, String at) {
            JsonNode v = n.get(field);
            if (v == null || !v.isTextual() || v.asText().isBlank()) {
                throw new ManifestException(file + ": field '" + path(at, field) + "' must be a non-empty string");
            }
            return v.asText();
        }

        double number(JsonNode n, String field, String at) {
            JsonNode v = n.get(field);
            if (v == null || !v.isNumber()) {
                throw new ManifestException(file + ": field '" + path(at, field) + "' must be a number");
            }
            return v.asDouble();
        }

        JsonNode array(JsonNode n, String field) {
            JsonNode v = n.get(field);
            if (v == null || !v.isArray()) {
                throw new ManifestException(file + ": field '" + field + "' must be an array");
            }
            return v;
        }

        JsonNode object(JsonNode n, String field) {
            JsonNode v = n.get(field);
            if (v == null || !v.isObject()) {
                throw new ManifestException(file + ": field '" + field + "' must be an object");
            }
            return v;
        }

        List<String> strings(JsonNode n, String field) {
            JsonNode a = array(n, field);
            List<String> out = new ArrayList<>();
            for (int i = 0; i < a.size(); i++) {
                if (!a.get(i).isTextual()) {
                    throw new ManifestException(file + ": field '" + field + "[" + i + "]' must be a string");
                }
                out.add(a.get(i).asText());
            }
            return List.copyOf(out);
        }

        private static String path(String at, String field) {
            return at.isEmpty() ? field : at + "." + field;
        }
    }

    /**
     * The text of the paper's reference artifact ({@code seed_artifact}): from the classpath, where the build and the
     * bundle carry {@code fixtures/seeds/}, else as a file; never found through the working folder alone, so a run
     * started anywhere reads the same file. Throws naming both places when it is in neither.
     */
    public static String seedArtifactText(Manifest manifest) throws IOException {
        String name = manifest.seedArtifact();
        String resource = name.startsWith("fixtures/") ? name : "fixtures/seeds/" + name;
        try (InputStream in = ManifestLoader.class.getClassLoader().getResourceAsStream(resource)) {
            if (in != null) {
                return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            }
        }
        Path file = Path.of(name);
        if (Files.isRegularFile(file)) {
            return Files.readString(file);
        }
        throw new java.io.FileNotFoundException(manifest.file() + ": seed_artifact " + name + " is neither on the classpath (" + resource
                + ") nor a file");
    }
}
