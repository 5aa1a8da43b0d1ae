package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.IntStream;
import org.mechspec.data.DataFiles;
import org.mechspec.report.ArtifactRenderer;
import org.mechspec.report.ClaimPolicy;
import org.mechspec.report.LayoutCheck;
import org.mechspec.report.PaperRun;
import org.mechspec.report.TemplateForm;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;

/**
 * The rules an artifact of a paper must satisfy. One that mechspec wrote is rendered again from its {@code mechspec}
 * block with the reporter's renderer and must equal that rendering exactly; the block must come from this manifest,
 * name a known backend and a commit. A seed file, which mechspec did not write, must have its own layout; its
 * per-seed values, read through the template, are rendered again, and wherever it holds a rendered figure the two
 * agree to 1e-12 relative (aggregates, seed lists, claims); its negative result states each contradicting seed. Both
 * keep the seed file's layout, hold only seeds of the manifest, no failed check and non-empty provenance.
 */
final class ArtifactValidator {
    static final double REL = 1e-12;
    private static final JsonPath BLOCK = JsonPath.ROOT.key("mechspec");

    private final Manifest manifest;
    private final TemplatePositions template;
    private final JsonNode artifact;
    /** The paper's seed file, or null when the manifest names none. */
    private final JsonNode seedLayout;
    private final List<Finding> findings = new ArrayList<>();
    /** A seed file's per-seed values as read; null for an artifact mechspec wrote. */
    private ArtifactContent content;

    private ArtifactValidator(Manifest manifest, JsonNode artifact) {
        this.manifest = manifest;
        this.template = TemplatePositions.of(manifest.artifact());
        this.artifact = artifact;
        this.seedLayout = manifest.seedArtifact().isBlank() ? null : seedLayout(manifest);
    }

    /** Every finding in rule order, one per path (the first rule to name a path names it). */
    static List<Finding> validate(Manifest manifest, JsonNode artifact) {
        // A run on a given checkpoint was rendered from the manifest's checkpoint_protocol.
        boolean onCheckpoint = artifact.path("mechspec").path("checkpoint").isObject();
        ArtifactValidator v = new ArtifactValidator(onCheckpoint ? ManifestLoader.forCheckpoint(manifest) : manifest, artifact);
        if (artifact.has("mechspec")) {
            v.written();
        } else {
            v.foreign();
        }
        Map<String, Finding> unique = new LinkedHashMap<>();
        v.findings.forEach(f -> unique.putIfAbsent(f.path(), f));
        return List.copyOf(unique.values());
    }

    /** An artifact mechspec wrote: its block, rendered again, must give the artifact. */
    private void written() {
        Set<String> reported = seedFileLayout();
        JsonNode block = artifact.get("mechspec");
        if (!block.isObject()) {
            add(BLOCK, "expected object, got " + JsonPath.type(block));
            return;
        }
        PaperRun run;
        try {
            run = PaperRun.fromJson(block);
        } catch (RuntimeException e) {
            add(BLOCK.key("seeds"), "unreadable: " + e.getMessage());
            return;
        }
        if (!run.paper.equals(manifest.paper())) {
            add(BLOCK.key("paper"), "'" + run.paper + "', but the artifact is read as " + manifest.paper());
        }
        String implementation = block.path("device_provenance").path("implementation").path("name").asText("");
        if (!implementation.isEmpty()) {
            // An outside implementation's artifact (PROTOCOL.md): its backend is the worker's id.
            if (!run.backend.equals(implementation)) {
                add(BLOCK.key("backend"), "expected the implementation's id '" + implementation + "', got '" + run.backend + "'");
            }
        } else if (!List.of("cpu", "cuda", "cuda-emulated").contains(run.backend)) {
            add(BLOCK.key("backend"), "expected cpu, cuda or cuda-emulated (or an implementation's id with its provenance), got '"
                    + run.backend + "'");
        }
        String commit = block.path("commit").asText("");
        if (commit.isBlank()) {
            add(BLOCK.key("commit"), "provenance (commit) is missing");
        }
        String sha = DataFiles.sha256(manifest.root().toString().getBytes(StandardCharsets.UTF_8));
        if (!block.path("manifest_sha256").asText("").equals(sha)) {
            add(BLOCK.key("manifest_sha256"), "made with another version of " + manifest.file() + " (" + sha + ")");
        }
        JsonNode rendered = render(run, commit, sources(template, artifact), template.first(TemplateForm.JVM, artifact).asText(""), true);
        if (rendered != null) {
            compare(rendered, artifact, JsonPath.ROOT, true, true, reported);
        }
        seedsOfTheManifest(run.seeds.keySet(), seed -> BLOCK.key("seeds").key(Long.toString(seed)));
        noFailedCheck(run, (seed, name) -> BLOCK.key("seeds").key(Long.toString(seed)).key("checks").key(name),
                (seed, name) -> BLOCK.key("seeds").key(Long.toString(seed)).key("metrics").key(name));
        provenancePresent(path -> true);
    }

    /** A seed file: its own layout, and the figures its per-seed values determine. */
    private void foreign() {
        if (seedLayout == null) {
            add(JsonPath.ROOT, "no mechspec block, and " + manifest.paper() + " names no seed file whose layout it could follow");
            return;
        }
        Set<String> reported = seedFileLayout();
        Set<String> seedPaths = LayoutCheck.paths(seedLayout, manifest.freeKeys()).keySet();
        Predicate<JsonPath> required = path -> seedPaths.contains(path.layoutPath());
        content = ArtifactContent.read(manifest, template, artifact);
        findings.addAll(content.findings);
        perSeedElementLayout(reported);
        PaperRun run = content.toRun();
        JsonNode rendered = render(run, "", Map.of(), "", false);
        if (rendered != null) {
            compare(rendered, artifact, JsonPath.ROOT, false, false, reported);
        }
        seedsOfTheManifest(content.seeds, content.seedOrigin::get);
        noFailedCheck(run, (seed, name) -> content.checkOrigin.get(seed + "/" + name),
                (seed, name) -> content.metricOrigin.get(seed + "/" + name));
        negativeResultStatesEachContradiction(content.metrics);
        provenancePresent(required);
        if (template.top(TemplateForm.COMMIT).isEmpty()) {
            add(JsonPath.ROOT, "no commit recorded (the template has no $commit and there is no mechspec block)");
        }
    }

    /** The executed-source hashes the artifact states (at its first {@code $sources} position). */
    static Map<String, String> sources(TemplatePositions template, JsonNode artifact) {
        Map<String, String> out = new TreeMap<>();
        template.first(TemplateForm.SOURCES, artifact).fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        return out;
    }

    private JsonNode render(PaperRun run, String commit, Map<String, String> sources, String jvm, boolean ours) {
        try {
            ArtifactRenderer renderer = new ArtifactRenderer(manifest, run, commit, sources, jvm);
            return ours ? renderer.recordedManifestSha256(artifact.path("mechspec").path("manifest_sha256").asText("")).render()
                    : renderer.renderWhatTheRunHolds();
        } catch (RuntimeException e) {
            add(JsonPath.ROOT, "cannot be rendered again from its " + (ours ? "mechspec block" : "per-seed values") + ": " + e.getMessage());
            return null;
        }
    }

    /** The seed file's key paths and types; returns the paths named. */
    private Set<String> seedFileLayout() {
        Set<String> reported = new HashSet<>();
        if (seedLayout != null) {
            for (String f : LayoutCheck.compare(seedLayout, artifact, manifest.freeKeys())) {
                int colon = f.indexOf(": ");
                if (notJudgedGap(f.substring(0, colon), f.substring(colon + 2))) {
                    continue;
                }
                findings.add(new Finding(f.substring(0, colon), f.substring(colon + 2), false));
                reported.add(f.substring(0, colon));
            }
        }
        return reported;
    }

    /**
     * A check an outside implementation computed nothing of has no verdict, so the seed file's boolean for it is absent;
     * the block's {@code not_judged} (on some seed) says why, and that absence is no finding.
     */
    private boolean notJudgedGap(String path, String message) {
        if (!message.startsWith("missing")) {
            return false;
        }
        String check = path.substring(path.lastIndexOf('.') + 1);
        for (JsonNode seed : artifact.path("mechspec").path("seeds")) {
            if (seed.path(org.mechspec.report.PaperRun.NOT_JUDGED).has(check)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The layout check merges array elements ({@code per_seed[]}); here every element of a per-seed array must have
     * each path and type the seed file gives its elements, so one seed's missing or retyped entry is named too.
     */
    private void perSeedElementLayout(Set<String> reported) {
        Map<String, String> want = LayoutCheck.paths(seedLayout, manifest.freeKeys());
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
                        if (!notJudgedGap(path, "missing")) {
                            findings.add(new Finding(at + "." + path.substring(prefix.length()), "missing (reference has " + type + ")", false));
                        }
                    } else if (!got.equals(type) && !got.contains(type)) {
                        findings.add(new Finding(at + "." + path.substring(prefix.length()), "expected " + type + ", got " + got, false));
                    }
                });
            }
        }
    }

    /**
     * The artifact where the rendering has a value. Ours must equal it everywhere, with nothing added. A seed file is
     * compared only at the template's dynamic parts where it has a value (its layout and static text are its own), not
     * at its provenance or negative result (its prose), and numbers to 1e-12 relative (another program computed them).
     */
    private void compare(JsonNode want, JsonNode got, JsonPath at, boolean ours, boolean dynamic, Set<String> reported) {
        TemplateForm form = template.formAt.get(at.layoutPath());
        boolean inForm = dynamic || (form != null && form != TemplateForm.EACH_SEED); // a per-seed element has static parts too
        // A seed file's own text (copied manifest fields), prose, provenance and runtime are not ours to recompute.
        boolean theirs = form != null && (form.provenance() || form == TemplateForm.NEGATIVE_RESULT || form == TemplateForm.MANIFEST
                || form == TemplateForm.GPU_VALIDATED || form == TemplateForm.RUNTIME);
        boolean skip = ours ? at.equals(BLOCK.key("manifest_sha256")) // named above with the manifest file
                : theirs || want.isNull() || (!inForm && !want.isContainerNode());
        if (skip || reported.contains(at.layoutPath()) || (got.isMissingNode() && !ours)) {
            return;
        }
        String source = ours ? "rendering the mechspec block gives" : "the per-seed values give";
        if (got.isMissingNode()) {
            add(at, "missing (" + source + " " + LayoutCheck.type(want) + ")");
        } else if (!LayoutCheck.type(want).equals(LayoutCheck.type(got))) {
            add(at, "expected " + LayoutCheck.type(want) + ", got " + LayoutCheck.type(got));
        } else if (want.isObject()) {
            want.fields().forEachRemaining(e -> compare(e.getValue(), got.path(e.getKey()), at.key(e.getKey()), ours, inForm, reported));
            got.fieldNames().forEachRemaining(key -> {
                if (!want.has(key) && (ours || form == TemplateForm.AGGREGATE)) {
                    add(at.key(key), form == TemplateForm.AGGREGATE && !manifest.metrics().containsKey(key)
                            ? "'" + key + "' is not a metric of " + manifest.paper() : "not in the rendering of the " + (ours ? "mechspec block" : "per-seed values"));
                }
            });
        } else if (!ours && (form == TemplateForm.EACH_SEED || form == TemplateForm.SEEDS)) {
            seedFileArray(want, got, at, form, reported);
        } else if (want.isArray() && scalars(want) && inForm) {
            if (want.size() != got.size() || IntStream.range(0, want.size()).anyMatch(i -> !equal(want.get(i), got.get(i), ours ? 0 : REL))) {
                add(at, got + ", but " + source + " " + want);
            }
        } else if (want.isArray() && want.size() != got.size() && inForm) {
            add(at, got.size() + " elements, but " + source + " " + want.size());
        } else if (want.isArray()) {
            for (int i = 0; i < Math.min(want.size(), got.size()); i++) {
                compare(want.get(i), got.get(i), at.index(i), ours, inForm, reported);
            }
        } else if (form == TemplateForm.RECORDS_SHA256 && !want.equals(got)) {
            add(at, "does not match the SHA-256 of the mechspec block (" + want.asText() + "): the block was changed after rendering");
        } else if (!equal(want, got, ours ? 0 : REL)) {
            add(at, got + ", but " + source + " " + want + (!ours && want.isFloatingPointNumber() ? String.format(Locale.ROOT,
                    " (relative difference %.3g > %.0e)", relative(want.asDouble(), got.asDouble()), REL) : ""));
        }
    }

    /** A seed file may list its seeds, and order its per-seed elements, in any order; the rendering's are ascending. */
    private void seedFileArray(JsonNode want, JsonNode got, JsonPath at, TemplateForm form, Set<String> reported) {
        List<Long> ascending = new ArrayList<>(new TreeSet<>(content.seeds));
        if (form == TemplateForm.SEEDS) {
            List<Long> listed = new ArrayList<>();
            got.forEach(s -> listed.add(s.asLong()));
            if (listed.size() != ascending.size() || !ascending.containsAll(listed)) {
                add(at, "lists seeds " + listed + ", but the per-seed values hold seeds " + content.seeds);
            }
            return;
        }
        List<Long> elements = content.elementSeeds.getOrDefault(at, List.of());
        for (int j = 0; j < elements.size(); j++) {
            if (elements.get(j) != null) {
                compare(want.get(ascending.indexOf(elements.get(j))), got.get(j), at.index(j), false, false, reported);
            }
        }
    }

    private static boolean scalars(JsonNode array) {
        return IntStream.range(0, array.size()).noneMatch(i -> array.get(i).isContainerNode());
    }

    private static boolean equal(JsonNode want, JsonNode got, double rel) {
        if (!want.isNumber()) {
            return want.equals(got);
        }
        if (want.isIntegralNumber() && got.isIntegralNumber()) {
            return want.asLong() == got.asLong();
        }
        return (rel > 0 || want.isIntegralNumber() == got.isIntegralNumber())
                && (want.asDouble() == got.asDouble() || relative(want.asDouble(), got.asDouble()) <= rel);
    }

    private static double relative(double a, double b) {
        return Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b));
    }

    private void seedsOfTheManifest(Iterable<Long> seeds, Function<Long, JsonPath> origin) {
        boolean any = false;
        for (long seed : seeds) {
            any = true;
            if (!manifest.seeds().contains(seed)) {
                add(origin.apply(seed), "seed " + seed + " is not a seed of " + manifest.paper() + " " + manifest.seeds());
            }
        }
        if (!any) {
            add(template.top(TemplateForm.SEEDS).stream().map(TemplatePositions.Position::path).findFirst().orElse(BLOCK), "no seed results");
        }
    }

    /**
     * Every check outcome true. A boolean metric named like a check (pn-mix's mask_unchanged_after_decode) is that
     * check's measured condition, so false counts as a failure too; seed files record some checks only that way.
     */
    private void noFailedCheck(PaperRun run, BiFunction<Long, String, JsonPath> checkAt, BiFunction<Long, String, JsonPath> metricAt) {
        run.seeds.forEach((seed, r) -> {
            r.checks.keySet().stream().filter(check -> !run.checkOutcome(seed, check))
                    .forEach(check -> findings.add(new Finding(checkAt.apply(seed, check).toString(), "check failed on seed " + seed, true)));
            r.metrics.forEach((name, value) -> {
                if (Boolean.FALSE.equals(value) && manifest.checks().containsKey(name)) {
                    findings.add(new Finding(metricAt.apply(seed, name).toString(), "false: the check of this name fails on seed " + seed, true));
                }
            });
        });
    }

    /** A seed file's negative result is its own prose; it must state each sentence the hypotheses give. */
    private void negativeResultStatesEachContradiction(Map<Long, Map<String, Object>> perSeed) {
        for (TemplatePositions.Position p : template.top(TemplateForm.NEGATIVE_RESULT)) {
            JsonNode got = p.path().in(artifact);
            String want = ClaimPolicy.negativeResult(manifest, perSeed);
            if (!got.isTextual() || got.asText().equals(want)) {
                continue; // the layout check names a missing one
            }
            List<String> missing = ClaimPolicy.violations(manifest, perSeed).stream().filter(s -> !got.asText().contains(s)).toList();
            missing.forEach(s -> add(p.path(), "does not state the contradicting seed: '" + s + "'"));
            if (missing.isEmpty()) {
                add(p.path(), "'" + got.asText() + "', but the hypotheses give '" + want + "'");
            }
        }
    }

    private void provenancePresent(Predicate<JsonPath> required) {
        List<TemplatePositions.Position> facts = new ArrayList<>(template.top.stream().filter(p -> p.form().provenance()).toList());
        for (TemplatePositions.PerSeed s : template.perSeed) {
            for (int i = 0; i < s.array().in(artifact).size(); i++) {
                for (TemplatePositions.Position f : s.fields()) {
                    if (f.form().provenance()) {
                        facts.add(new TemplatePositions.Position(s.array().index(i).append(f.path()), f.form(), null));
                    }
                }
            }
        }
        for (TemplatePositions.Position p : facts) {
            JsonNode n = p.path().in(artifact);
            boolean sources = p.form() == TemplateForm.SOURCES;
            boolean present = sources ? n.isObject() && n.size() > 0 : n.isTextual() && !n.asText().isBlank();
            if (!present && (required.test(p.path()) || !n.isMissingNode())) {
                add(p.path(), "provenance (" + p.form().key() + ") is " + (n.isMissingNode() ? "missing"
                        : "empty or not " + (sources ? "an object" : "a string")));
            }
        }
    }

    private void add(JsonPath at, String message) {
        findings.add(Finding.at(at, message));
    }

    /** The paper's reference artifact, from the classpath (fixtures/seeds/ is built into the jar) or the file system. */
    static JsonNode seedLayout(Manifest manifest) {
        try {
            return ArtifactFile.JSON.readTree(ManifestLoader.seedArtifactText(manifest));
        } catch (IOException e) {
            throw new InputException(manifest.file() + ": seed_artifact " + manifest.seedArtifact() + " is unreadable: " + e.getMessage());
        }
    }
}
