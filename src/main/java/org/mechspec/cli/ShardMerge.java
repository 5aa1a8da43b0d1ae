package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.mechspec.data.DataFiles;
import org.mechspec.report.ArtifactRenderer;
import org.mechspec.report.PaperRun;
import org.mechspec.report.TemplateForm;
import org.mechspec.spec.Manifest;

/**
 * Joins artifacts of one paper and backend made by runners with disjoint seeds: the {@code mechspec} blocks are
 * united and the manifest's template rendered again, so aggregates, negative results and the records hash cover
 * every seed. Shards that overlap, come from different commits, sources or manifests, or are not valid are refused.
 */
final class ShardMerge {
    /** A merge that must not happen, with every reason (one line each). */
    static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        final List<String> reasons;

        Refused(List<String> reasons) {
            super(String.join("; ", reasons));
            this.reasons = List.copyOf(reasons);
        }
    }

    private record Shard(ArtifactFile file, Manifest manifest, PaperRun run, Map<String, String> sources, String jvm) {
    }

    /** Failed checks carried into the merged artifact (they are results, not reasons to refuse). */
    final List<String> notes = new ArrayList<>();

    ObjectNode merge(Manifests manifests, List<ArtifactFile> files) throws Refused {
        List<String> reasons = new ArrayList<>();
        List<Shard> shards = new ArrayList<>();
        for (ArtifactFile f : files) {
            JsonNode block = f.mechspecBlock();
            if (block == null) {
                reasons.add(f.path() + ": no mechspec block: only artifacts written by mechspec can be merged");
                continue;
            }
            Manifest manifest = manifests.forArtifact(f);
            for (Finding finding : ArtifactValidator.validate(manifest, f.json())) {
                (finding.failedCheck() ? notes : reasons).add(f.path() + ": " + finding);
            }
            TemplatePositions template = TemplatePositions.of(manifest.artifact());
            shards.add(new Shard(f, manifest, DiffCommand.runOf(manifest, f), ArtifactValidator.sources(template, f.json()),
                    template.first(TemplateForm.JVM, f.json()).asText("")));
        }
        if (shards.isEmpty()) {
            throw new Refused(reasons);
        }
        Shard first = shards.get(0);
        for (Shard s : shards.subList(1, shards.size())) {
            same(reasons, s, first, "paper", s.run.paper, first.run.paper);
            same(reasons, s, first, "backend", s.run.backend, first.run.backend);
            same(reasons, s, first, "commit (mechspec.commit)", s.file.mechspecBlock().path("commit").asText(),
                    first.file.mechspecBlock().path("commit").asText());
            same(reasons, s, first, "manifest (mechspec.manifest_sha256)", s.file.mechspecBlock().path("manifest_sha256").asText(),
                    first.file.mechspecBlock().path("manifest_sha256").asText());
            if (!s.sources.equals(first.sources)) {
                reasons.add(s.file.path() + ": executed sources differ from those of " + first.file.path());
            }
            for (String field : List.of("command", "version", "files_sha256")) { // one outside implementation, not two
                same(reasons, s, first, "implementation " + field, s.run.deviceProvenance.path("implementation").path(field).toString(),
                        first.run.deviceProvenance.path("implementation").path(field).toString());
            }
        }
        for (int i = 0; i < shards.size(); i++) {
            for (int j = i + 1; j < shards.size(); j++) {
                Set<Long> both = new LinkedHashSet<>(shards.get(i).run.seeds.keySet());
                both.retainAll(shards.get(j).run.seeds.keySet());
                if (!both.isEmpty()) {
                    reasons.add(shards.get(j).file.path() + ": seeds " + both + " are also in " + shards.get(i).file.path()
                            + " (shards must hold disjoint seeds)");
                }
            }
        }
        if (!reasons.isEmpty()) {
            throw new Refused(reasons);
        }
        return render(first.manifest, shards);
    }

    private static void same(List<String> reasons, Shard s, Shard first, String what, String a, String b) {
        if (!a.equals(b)) {
            reasons.add(s.file.path() + ": " + what + " is '" + a + "', but " + first.file.path() + " has '" + b + "'");
        }
    }

    /**
     * One outside implementation's record over shards: its calls summed and the operations it served joined. Shards of
     * different commands, versions or files were refused before ({@link #refusals}).
     */
    private static ObjectNode implementation(Set<com.fasterxml.jackson.databind.JsonNode> provenances) {
        ObjectNode out = null;
        java.util.TreeSet<String> served = new java.util.TreeSet<>();
        java.util.TreeMap<String, Long> calls = new java.util.TreeMap<>();
        for (com.fasterxml.jackson.databind.JsonNode p : provenances) {
            com.fasterxml.jackson.databind.JsonNode impl = p.get("implementation");
            out = out == null ? impl.deepCopy() : out;
            impl.path("operations_served").forEach(op -> served.add(op.asText()));
            impl.path("calls").fields().forEachRemaining(e -> calls.merge(e.getKey(), e.getValue().asLong(), Long::sum));
        }
        var servedArray = out.putArray("operations_served");
        served.forEach(servedArray::add);
        ObjectNode callsNode = out.putObject("calls");
        calls.forEach(callsNode::put);
        return out;
    }

    private static ObjectNode render(Manifest manifest, List<Shard> shards) {
        Shard first = shards.get(0);
        PaperRun merged = new PaperRun(first.run.paper, first.run.backend);
        Set<String> devices = new LinkedHashSet<>();
        Set<String> jvms = new LinkedHashSet<>();
        Set<com.fasterxml.jackson.databind.JsonNode> provenances = new LinkedHashSet<>();
        for (Shard s : shards) {
            devices.add(s.run.device);
            if (!s.run.deviceProvenance.isEmpty()) {
                provenances.add(s.run.deviceProvenance);
            }
            jvms.add(s.jvm);
            merged.seeds.putAll(s.run.seeds);
            s.run.propertyChecks.forEach(merged::propertyOutcome);
        }
        // A property half not judged in one shard but judged in another has that verdict (PaperRun#propertyNotJudged).
        for (Shard s : shards) {
            s.run.propertyNotJudged.forEach(merged::propertyNotJudged);
        }
        merged.device = String.join(", ", devices);
        if (provenances.size() > 1 && provenances.stream().allMatch(p -> p.has("implementation"))) {
            merged.deviceProvenance.set("implementation", implementation(provenances));
        } else if (provenances.size() == 1) {
            merged.deviceProvenance.setAll((ObjectNode) provenances.iterator().next());
        } else if (provenances.size() > 1) { // runners on different devices: keep each one's record
            merged.deviceProvenance.putArray("shards").addAll(provenances);
        }
        String commit = first.file.mechspecBlock().path("commit").asText();
        ObjectNode artifact = new ArtifactRenderer(manifest, merged, commit, first.sources, String.join(", ", jvms)).render();
        String sha = DataFiles.sha256(manifest.root().toString().getBytes(StandardCharsets.UTF_8));
        if (!artifact.path("mechspec").path("manifest_sha256").asText().equals(sha)) {
            throw new IllegalStateException("merged artifact carries another manifest hash than " + manifest.file());
        }
        return artifact;
    }
}
