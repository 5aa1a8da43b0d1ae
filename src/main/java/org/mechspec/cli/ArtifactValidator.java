package org.mechspec.cli;

import org.mechspec.report.TemplateForm;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.mechspec.data.DataFiles;
import org.mechspec.report.ClaimPolicy;
import org.mechspec.report.LayoutCheck;
import org.mechspec.report.PaperRun;
import org.mechspec.report.Statistics;
import org.mechspec.spec.Manifest;

/**
 * The rules an artifact of a paper must satisfy: the seed file's layout (or the template's, without a seed file);
 * per-seed values of the right types that agree wherever they appear; aggregates that the per-seed values reproduce
 * to 1e-12 relative; no failed check; negative results and improvement claims as the manifest's hypotheses dictate;
 * provenance present; and, in artifacts mechspec wrote, a {@code mechspec} block that matches the rendered parts.
 */
final class ArtifactValidator {
    static final double REL = 1e-12;

    private final Manifest manifest;
    private final TemplatePositions template;
    private final JsonNode artifact;
    /** The paper's seed file, or null when the manifest names none. */
    private final JsonNode seedLayout;
    /** Artifacts mechspec rendered carry everything the template places; a seed file only its own layout. */
    private final boolean rendered;
    private final Set<String> seedPaths;
    private final ArtifactContent content;
    private final List<Finding> findings = new ArrayList<>();

    private ArtifactValidator(Manifest manifest, JsonNode artifact) {
        this.manifest = manifest;
        this.template = TemplatePositions.of(manifest.artifact());
        this.artifact = artifact;
        this.seedLayout = manifest.seedArtifact().isBlank() ? null : seedLayout(manifest);
        this.rendered = artifact.has("mechspec");
        this.seedPaths = seedLayout == null ? Set.of() : LayoutCheck.paths(seedLayout, manifest.freeKeys()).keySet();
        this.content = ArtifactContent.read(manifest, template, artifact, this::required);
    }

    /** Whether a missing value at this path is a finding: always in our artifacts, in a seed file where its layout has it. */
    private boolean required(JsonPath path) {
        return rendered || seedLayout == null || seedPaths.contains(path.layoutPath());
    }

    /** Every finding, in rule order, without repeats. */
    static List<Finding> validate(Manifest manifest, JsonNode artifact) {
        ArtifactValidator v = new ArtifactValidator(manifest, artifact);
        v.layout();
        v.findings.addAll(v.content.findings);
        v.seedsBelongToTheManifest();
        v.singleSeedValues();
        v.aggregates();
        v.checksPassed();
        v.hypotheses();
        v.provenance();
        v.mechspecBlock();
        // One line per problem: a path reported missing by two rules is reported once, by the first.
        Map<String, Finding> unique = new java.util.LinkedHashMap<>();
        for (Finding f : v.findings) {
            unique.putIfAbsent(f.path() + ": " + (f.message().startsWith("missing") ? "missing" : f.message()), f);
        }
        return List.copyOf(unique.values());
    }

    /** The seed file's key paths and types; for our artifacts, and without a seed file, also the template's. */
    private void layout() {
        List<String> found = new ArrayList<>();
        if (seedLayout != null) {
            found.addAll(LayoutCheck.compare(seedLayout, artifact, manifest.freeKeys()));
        }
        if (seedLayout == null || rendered) {
            found.addAll(LayoutCheck.compare(template.skeleton, artifact, manifest.freeKeys()));
        }
        Set<String> reported = new java.util.HashSet<>();
        for (String f : found) {
            int colon = f.indexOf(": ");
            findings.add(new Finding(f.substring(0, colon), f.substring(colon + 2), false));
            reported.add(f.substring(0, colon));
        }
        perSeedElementLayout(reported);
    }

    /**
     * The layout check merges array elements ({@code per_seed[]}); here every element of a per-seed array must have
     * each path and type the reference gives its elements, so one seed's missing or retyped entry is named too.
     */
    private void perSeedElementLayout(Set<String> reported) {
        Map<String, String> want = new java.util.TreeMap<>();
        if (seedLayout != null) {
            want.putAll(LayoutCheck.paths(seedLayout, manifest.freeKeys()));
        }
        if (seedLayout == null || rendered) {
            want.putAll(LayoutCheck.paths(template.skeleton, manifest.freeKeys()));
        }
        for (TemplatePositions.PerSeed p : template.perSeed) {
            JsonNode array = p.array().in(artifact);
            String prefix = p.array().layoutPath() + "[].";
            for (int i = 0; i < array.size(); i++) {
                Map<String, String> have = LayoutCheck.paths(array.get(i), List.of());
                JsonPath at = p.array().index(i);
                want.forEach((path, type) -> {
                    if (!path.startsWith(prefix) || reported.contains(path)) {
                        return;
                    }
                    String got = have.get(path.substring(prefix.length()));
                    if (got == null) {
                        findings.add(new Finding(at + "." + path.substring(prefix.length()), "missing (reference has " + type + ")", false));
                    } else if (!got.equals(type) && !got.contains(type)) {
                        findings.add(new Finding(at + "." + path.substring(prefix.length()), "expected " + type + ", got " + got, false));
                    }
                });
            }
        }
    }

    /** The paper's reference artifact, from the classpath (fixtures/seeds/ is built into the jar) or the file system. */
    static JsonNode seedLayout(Manifest manifest) {
        String name = manifest.seedArtifact();
        String resource = name.startsWith("fixtures/") ? name : "fixtures/seeds/" + name;
        try (InputStream in = ArtifactValidator.class.getClassLoader().getResourceAsStream(resource)) {
            if (in != null) {
                return ArtifactFile.JSON.readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
            Path file = Path.of(name);
            if (Files.isRegularFile(file)) {
                return ArtifactFile.JSON.readTree(Files.readString(file));
            }
        } catch (IOException e) {
            throw new InputException(manifest.file() + ": seed_artifact " + name + " is unreadable: " + e.getMessage());
        }
        throw new InputException(manifest.file() + ": seed_artifact " + name + " is neither on the classpath nor a file");
    }

    private void seedsBelongToTheManifest() {
        JsonPath at = template.top(TemplateForm.SEEDS).stream().map(TemplatePositions.Position::path).findFirst().orElse(JsonPath.ROOT);
        for (long seed : content.seeds) {
            if (!manifest.seeds().contains(seed)) {
                findings.add(Finding.at(content.seedOrigin.getOrDefault(seed, at), "seed " + seed + " is not a seed of "
                        + manifest.paper() + " " + manifest.seeds()));
            }
        }
        if (content.seeds.isEmpty()) {
            findings.add(Finding.at(at, "no seed results"));
        }
    }

    /** {@code "$first_seed"} and one seed's value placed anywhere ({@code {"$metric": {"name": n, "seed": s}}}). */
    private void singleSeedValues() {
        long first = content.seeds.stream().mapToLong(Long::longValue).min().orElse(Long.MIN_VALUE);
        for (TemplatePositions.Position p : template.top(TemplateForm.FIRST_SEED)) {
            JsonNode got = p.path().in(artifact);
            if (!got.isMissingNode() && !(got.isIntegralNumber() && got.asLong() == first)) {
                findings.add(Finding.at(p.path(), got + ", but the first seed that ran is " + first));
            }
        }
        for (TemplatePositions.Position p : template.top) {
            if (!(p.form() == TemplateForm.METRIC || p.form() == TemplateForm.CHECK) || !p.arg().isObject()) {
                continue;
            }
            JsonNode got = p.path().in(artifact);
            String name = p.arg().path("name").asText();
            long seed = p.arg().path("seed").asText().equals("first") ? first : p.arg().path("seed").asLong();
            boolean isMetric = manifest.metrics().containsKey(name); // the renderer's lookup order
            Object want = isMetric ? content.metrics.getOrDefault(seed, Map.of()).get(name)
                    : content.checks.getOrDefault(seed, Map.of()).get(name);
            JsonPath wantAt = (isMetric ? content.metricOrigin : content.checkOrigin).get(seed + "/" + name);
            if (got.isMissingNode()) {
                if (required(p.path())) {
                    findings.add(Finding.at(p.path(), "missing (" + name + " of seed " + seed + ")"));
                }
            } else if (!(got.isNumber() || got.isBoolean())) {
                findings.add(Finding.at(p.path(), "expected number or boolean, got " + JsonPath.type(got)));
            } else if (want != null && !ArtifactContent.same(want, got.isBoolean() ? (Object) got.asBoolean() : (Object) got.asDouble())) {
                findings.add(Finding.at(p.path(), got + ", but " + wantAt + " holds " + want));
            }
        }
    }

    private void aggregates() {
        for (TemplatePositions.Position p : template.top(TemplateForm.AGGREGATE)) {
            JsonNode block = p.path().in(artifact);
            if (!block.isObject()) {
                continue; // the layout check names it
            }
            List<String> names = new ArrayList<>();
            JsonNode listed = p.arg().path("metrics");
            if (listed.isArray()) {
                listed.forEach(n -> names.add(n.asText()));
            } else {
                names.addAll(manifest.metrics().keySet());
            }
            for (String name : names) {
                List<Double> xs = content.numbers(name);
                if (xs == null || xs.isEmpty()) {
                    continue;
                }
                JsonNode stats = block.path(name);
                if (!stats.isObject()) {
                    if (!stats.isMissingNode()) {
                        findings.add(Finding.at(p.path().key(name), "expected object, got " + JsonPath.type(stats)));
                    } else if (required(p.path().key(name))) {
                        findings.add(Finding.at(p.path().key(name), "missing (aggregate over " + xs.size() + " seeds)"));
                    }
                    continue;
                }
                p.arg().path("stats").forEach(s -> compare(p.path().key(name).key(s.asText()), s.asText(), xs));
            }
            block.fieldNames().forEachRemaining(name -> {
                if (!names.contains(name) || content.numbers(name) == null || content.numbers(name).isEmpty()) {
                    findings.add(Finding.at(p.path().key(name), manifest.metrics().containsKey(name)
                            ? "aggregate of a metric no seed records as a number" : "'" + name + "' is not a metric of " + manifest.paper()));
                }
            });
        }
        for (TemplatePositions.Position p : template.top(TemplateForm.STAT)) {
            String metric = p.arg().path("metric").asText();
            List<Double> xs = content.numbers(metric);
            if (xs == null || xs.isEmpty()) {
                findings.add(Finding.at(p.path(), "no seed records '" + metric + "' as a number"));
            } else {
                compare(p.path(), p.arg().path("stat").asText(), xs);
            }
        }
    }

    private void compare(JsonPath at, String stat, List<Double> xs) {
        JsonNode got = at.in(artifact);
        double want = statistic(stat, xs);
        if (got.isMissingNode()) {
            if (required(at)) {
                findings.add(Finding.at(at, "missing (" + stat + " over " + xs.size() + " seeds is " + want + ")"));
            }
        } else if (!got.isNumber()) {
            findings.add(Finding.at(at, "expected number, got " + JsonPath.type(got)));
        } else if (!close(got.asDouble(), want)) {
            findings.add(Finding.at(at, String.format(Locale.ROOT, "%s, but the per-seed values give %s %s (relative difference %.3g > %.0e)",
                    got.asText(), stat, want, Math.abs(got.asDouble() - want) / Math.max(Math.abs(want), Math.abs(got.asDouble())), REL)));
        }
    }

    static boolean close(double a, double b) {
        return a == b || Math.abs(a - b) <= REL * Math.max(Math.abs(a), Math.abs(b));
    }

    static double statistic(String stat, List<Double> xs) {
        try {
            return Statistics.byName(stat, xs);
        } catch (IllegalArgumentException e) {
            throw new InputException(e.getMessage() + " in the manifest's template");
        }
    }

    /**
     * Every check outcome true. A boolean metric named like a check (pn-mix's mask_unchanged_after_decode) is that
     * check's measured condition, so false counts as a failure too; seed files record some checks only that way.
     */
    private void checksPassed() {
        content.checks.forEach((seed, outcomes) -> outcomes.forEach((check, passed) -> {
            if (!passed) {
                findings.add(new Finding(content.checkOrigin.get(seed + "/" + check).toString(), "check failed on seed " + seed, true));
            }
        }));
        content.metrics.forEach((seed, values) -> values.forEach((name, value) -> {
            if (Boolean.FALSE.equals(value) && manifest.checks().containsKey(name)) {
                findings.add(new Finding(content.metricOrigin.get(seed + "/" + name).toString(),
                        "false: the check of this name fails on seed " + seed, true));
            }
        }));
    }

    private void hypotheses() {
        Map<Long, Map<String, Object>> perSeed = content.metrics;
        for (TemplatePositions.Position p : template.top(TemplateForm.NEGATIVE_RESULT)) {
            JsonNode got = p.path().in(artifact);
            if (!got.isTextual()) {
                continue; // the layout check names it
            }
            String want = ClaimPolicy.negativeResult(manifest, perSeed);
            if (got.asText().equals(want)) {
                continue;
            }
            List<String> missing = ClaimPolicy.violations(manifest, perSeed).stream().filter(s -> !got.asText().contains(s)).toList();
            missing.forEach(s -> findings.add(Finding.at(p.path(), "does not state the contradicting seed: '" + s + "'")));
            if (missing.isEmpty()) {
                findings.add(Finding.at(p.path(), "'" + got.asText() + "', but the hypotheses give '" + want + "'"));
            }
        }
        for (TemplatePositions.Position p : template.top(TemplateForm.CLAIMS_IMPROVEMENT)) {
            JsonNode got = p.path().in(artifact);
            boolean want = ClaimPolicy.claimsImprovement(manifest, perSeed);
            if (got.isBoolean() && got.asBoolean() != want) {
                findings.add(Finding.at(p.path(), got.asBoolean()
                        ? "claims an improvement that not every seed supports" : "false, but every seed supports every hypothesis"));
            }
        }
    }

    private void provenance() {
        boolean commit = false;
        for (TemplatePositions.Position p : template.top) {
            if (p.form().provenance()) {
                requireFact(p.path(), p.form(), p.path().in(artifact));
                commit |= p.form() == TemplateForm.COMMIT;
            }
        }
        for (TemplatePositions.PerSeed s : template.perSeed) {
            JsonNode array = s.array().in(artifact);
            for (int i = 0; i < array.size(); i++) {
                for (TemplatePositions.Position f : s.fields()) {
                    if (f.form().provenance()) {
                        requireFact(s.array().index(i).append(f.path()), f.form(), f.path().in(array.get(i)));
                    }
                }
            }
        }
        if (!commit && artifact.path("mechspec").path("commit").asText("").isBlank()) {
            findings.add(Finding.at(JsonPath.ROOT, "no commit recorded (the template has no $commit and there is no mechspec block)"));
        }
    }

    private void requireFact(JsonPath at, TemplateForm form, JsonNode n) {
        if (n.isMissingNode() && !required(at)) {
            return;
        }
        boolean present = form == TemplateForm.SOURCES ? n.isObject() && n.size() > 0 : n.isTextual() && !n.asText().isBlank();
        if (!present) {
            findings.add(Finding.at(at, "provenance (" + form.key() + ") is " + (n.isMissingNode() ? "missing" : "empty or not "
                    + (form == TemplateForm.SOURCES ? "an object" : "a string"))));
        }
    }

    private void mechspecBlock() {
        JsonNode block = artifact.get("mechspec");
        if (block == null) {
            return; // a foreign artifact (a seed file): nothing mechspec wrote to compare
        }
        JsonPath at = JsonPath.ROOT.key("mechspec");
        if (!block.isObject()) {
            findings.add(Finding.at(at, "expected object, got " + JsonPath.type(block)));
            return;
        }
        PaperRun run;
        try {
            run = PaperRun.fromJson(block);
        } catch (RuntimeException e) {
            findings.add(Finding.at(at.key("seeds"), "unreadable: " + e.getMessage()));
            return;
        }
        if (!run.paper.equals(manifest.paper())) {
            findings.add(Finding.at(at.key("paper"), "'" + run.paper + "', but the artifact is read as " + manifest.paper()));
        }
        if (!List.of("cpu", "cuda", "cuda-emulated").contains(run.backend)) {
            findings.add(Finding.at(at.key("backend"), "expected cpu, cuda or cuda-emulated, got '" + run.backend + "'"));
        }
        if (block.path("commit").asText("").isBlank()) {
            findings.add(Finding.at(at.key("commit"), "provenance (commit) is missing"));
        }
        String sha = DataFiles.sha256(manifest.root().toString().getBytes(StandardCharsets.UTF_8));
        if (!block.path("manifest_sha256").asText("").equals(sha)) {
            findings.add(Finding.at(at.key("manifest_sha256"), "made with another version of " + manifest.file() + " (" + sha + ")"));
        }
        if (!run.seeds.keySet().equals(new java.util.TreeSet<>(content.seeds))) {
            findings.add(Finding.at(at.key("seeds"), "holds seeds " + run.seeds.keySet() + " but the artifact shows seeds " + content.seeds));
        }
        content.metrics.forEach((seed, values) -> values.forEach((name, value) -> {
            PaperRun.SeedRecord r = run.seeds.get(seed);
            Object recorded = r == null ? null : r.metrics.get(name);
            if (r != null && (recorded == null || !ArtifactContent.same(recorded, value))) {
                findings.add(Finding.at(content.metricOrigin.get(seed + "/" + name), value + ", but mechspec.seeds." + seed + ".metrics." + name
                        + " holds " + recorded));
            }
        }));
        content.checks.forEach((seed, outcomes) -> outcomes.forEach((check, value) -> {
            PaperRun.SeedRecord r = run.seeds.get(seed);
            if (r != null && (!r.checks.containsKey(check) || run.checkOutcome(seed, check) != value)) {
                findings.add(Finding.at(content.checkOrigin.get(seed + "/" + check), value + ", but mechspec.seeds." + seed + ".checks." + check
                        + " holds " + (r.checks.containsKey(check) ? run.checkOutcome(seed, check) : null)));
            }
        }));
        String records = DataFiles.sha256(block.toString().getBytes(StandardCharsets.UTF_8));
        for (TemplatePositions.Position p : template.top(TemplateForm.RECORDS_SHA256)) {
            JsonNode got = p.path().in(artifact);
            if (got.isTextual() && !got.asText().isBlank() && !got.asText().equals(records)) {
                findings.add(Finding.at(p.path(), "does not match the SHA-256 of the mechspec block (" + records + "): the block was changed after rendering"));
            }
        }
    }
}
