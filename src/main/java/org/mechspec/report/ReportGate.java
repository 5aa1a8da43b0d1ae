package org.mechspec.report;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;

/**
 * The verify-phase gate. It fails the build on a reporter error; in a full run (no -Dgroups but {@code seeded | …}, no -Dmechspec.seeds or
 * -Dtest), on a declared paper with no fresh artifact on the run's backends, on a committed reports/ file with no
 * fresh counterpart and on a test skipped for a missing data set, unless -Dmechspec.allowSkippedPapers=true; and
 * on a metric or check drift beyond the manifest tolerance against the committed reference of the same checkpoint
 * ({@link PaperRun#referenceName}). With update=true it rewrites the committed artifacts.
 * args: fresh folder, reports folder, contracts folder, then key=value: update, groups, seeds, test, skipTests,
 * backend, allowSkippedPapers (Maven passes an unset property as its literal ${...}, read as unset).
 */
public final class ReportGate {
    private ReportGate() {
    }

    /**
     * Whether a -Dgroups expression still runs every seeded half: none given, or one whose top-level alternatives
     * include the tag {@code seeded} (CI's emulated pass, {@code seeded | (cuda & !emulator-process)}, is a full run of its backend).
     */
    static boolean everySeededHalf(String groups) {
        return groups.isBlank() || java.util.Arrays.stream(groups.split("[|,]")).map(String::strip).anyMatch("seeded"::equals);
    }

    /** args: the fresh artifacts, reports/, contracts/, then key=value options (update, groups, seeds, test, skipTests, backend, allowSkippedPapers). */
    public static void main(String[] args) throws IOException {
        Path fresh = Path.of(args[0]);
        Path reports = Path.of(args[1]);
        Path contracts = Path.of(args[2]);
        Map<String, String> o = new HashMap<>();
        for (int i = 3; i < args.length; i++) {
            String[] kv = args[i].split("=", 2);
            o.put(kv[0], kv.length < 2 || kv[1].startsWith("${") ? "" : kv[1].trim());
        }
        boolean update = o.getOrDefault("update", "").equals("true");
        boolean full = everySeededHalf(o.getOrDefault("groups", "")) && o.getOrDefault("seeds", "").isEmpty()
                && o.getOrDefault("test", "").isEmpty() && !o.getOrDefault("skipTests", "").equals("true");
        if (!Files.isDirectory(fresh) && !full) {
            System.out.println("[mechspec] no fresh artifacts in " + fresh + " (no contract ran)");
            return;
        }
        List<String> errors = Files.isDirectory(fresh) ? ListenerErrors.read(fresh) : List.of();
        if (!errors.isEmpty()) {
            errors.forEach(e -> System.out.println("[mechspec] ERROR " + e));
            throw new IllegalStateException("the reporter failed: " + errors.get(0)
                    + (errors.size() > 1 ? " (and " + (errors.size() - 1) + " more above)" : ""));
        }
        List<String> implementation = Files.isDirectory(fresh) ? ListenerErrors.implementation(fresh) : List.of();
        if (!implementation.isEmpty()) {
            judgedImplementation(fresh, contracts, implementation, full);
            return;
        }
        List<Path> files = freshArtifacts(fresh);
        if (full) {
            List<String> gaps = notRun(fresh, reports, contracts, o.getOrDefault("backend", ""));
            boolean allowed = o.getOrDefault("allowSkippedPapers", "").equals("true");
            gaps.forEach(g -> System.out.println("[mechspec] " + (allowed ? "WARNING " : "ERROR ") + g));
            if (!gaps.isEmpty() && !allowed) {
                throw new IllegalStateException(gaps.size() + " paper(s) or data set(s) missing from a full run (first: " + gaps.get(0)
                        + "); pass the data folder with -Dmechspec.data.dir=DIR, or -Dmechspec.allowSkippedPapers=true to accept");
            }
        }
        List<String> findings = new ArrayList<>();
        List<String> unreferenced = new ArrayList<>();
        for (Path file : files) {
            String text = Files.readString(file);
            PaperRun freshRun = PaperRun.fromJson(PaperRun.JSON.readTree(text).path("mechspec"));
            Path committed = reports.resolve(freshRun.referenceName());
            if (update) {
                AtomicFiles.write(committed, text);
                System.out.println("[mechspec] updated " + committed);
                continue;
            }
            if (!Files.exists(committed)) {
                unreferenced.add(file.getFileName() + ": no committed reference " + committed
                        + "; run with -Dmechspec.updateReports=true to create it");
                continue;
            }
            Manifest manifest = ManifestLoader.load(contracts.resolve(freshRun.paper + ".json"));
            PaperRun ref = PaperRun.fromJson(PaperRun.JSON.readTree(Files.readString(committed)).path("mechspec"));
            // A run narrowed with -Dmechspec.seeds compares only the seeds it ran.
            ref.seeds.keySet().retainAll(freshRun.seeds.keySet());
            if (ArtifactDiff.adversarialMath(freshRun)) {
                System.out.println("[mechspec] " + file.getFileName() + " ran on " + freshRun.device
                        + ": its check outcomes are compared with " + committed + ", its metric values are not");
            }
            for (String f : ArtifactDiff.compare(manifest, freshRun, ref)) {
                findings.add(file.getFileName() + ": " + f);
            }
        }
        if (full && !update) {
            unreferenced.addAll(missingEmulatedReferences(files, reports));
        }
        // A full run judges every paper: one without a reference would pass unjudged, so there it fails the build.
        unreferenced.forEach(u -> System.out.println("[mechspec] " + (full ? "ERROR " : "WARNING: ") + u));
        if (full && !unreferenced.isEmpty()) {
            throw new IllegalStateException(unreferenced.size() + " fresh artifact(s) with no committed reference in a full run (first: "
                    + unreferenced.get(0) + ")");
        }
        if (!findings.isEmpty()) {
            findings.forEach(f -> System.out.println("[mechspec] DRIFT " + f));
            throw new IllegalStateException(findings.size() + " metric drift(s) against reports/ beyond the manifest tolerance"
                    + " (first: " + findings.get(0) + "); if the change is intended, rerun with -Dmechspec.updateReports=true");
        }
        if (!update) {
            System.out.println("[mechspec] " + files.size() + " artifact(s) checked against reports/: no drift beyond tolerance");
        }
    }

    /**
     * Where the project keeps emulated references (any {@code *.cuda-emulated.json} in reports/), CI's emulated pass
     * judges every paper a CPU run judges: a paper whose CPU artifact has no emulated reference beside it would pass
     * here and fail there, so the CPU run names it.
     */
    static List<String> missingEmulatedReferences(List<Path> fresh, Path reports) throws IOException {
        if (!Files.isDirectory(reports)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(reports)) {
            if (s.noneMatch(p -> p.getFileName().toString().endsWith(".cuda-emulated.json"))) {
                return List.of();
            }
        }
        List<String> out = new ArrayList<>();
        for (Path f : fresh) {
            String name = f.getFileName().toString();
            if (name.endsWith(".cpu.json")) {
                String paper = name.substring(0, name.length() - ".cpu.json".length());
                if (!Files.exists(reports.resolve(paper + ".cuda-emulated.json"))) {
                    out.add(paper + ": no committed reference " + reports.resolve(paper + ".cuda-emulated.json") + " for the emulated CUDA"
                            + " pass CI runs; write it with mvn -B verify -Dmechspec.backend=cuda-emulated -Dgroups=" + paper
                            + " -Dmechspec.updateReports=true -Dmechspec.data.dir=DIR");
                }
            }
        }
        return out;
    }

    /**
     * A run that judged an outside implementation: its artifacts are never compared with mechspec's references; a full
     * run must leave one for every paper whose operations it serves.
     */
    private static void judgedImplementation(Path fresh, Path contracts, List<String> implementation, boolean full) throws IOException {
        String id = implementation.get(0);
        List<String> missing = new ArrayList<>();
        for (Manifest m : ManifestLoader.loadAll(contracts)) {
            boolean served = m.operations().stream().anyMatch(implementation.subList(1, implementation.size())::contains);
            if (served && !Files.exists(fresh.resolve(m.paper() + "." + id + ".json"))) {
                missing.add(m.paper() + ": implementation " + id + " serves its operations but left no artifact " + fresh.resolve(m.paper() + "." + id + ".json"));
            }
        }
        if (full) {
            missing.forEach(g -> System.out.println("[mechspec] ERROR " + g));
            if (!missing.isEmpty()) {
                throw new IllegalStateException(missing.size() + " paper(s) the implementation serves left no artifact (first: " + missing.get(0) + ")");
            }
        }
        System.out.println("[mechspec] implementation " + id + ": its artifacts are not compared with reports/ (mechspec's own references)");
    }

    private static List<Path> freshArtifacts(Path fresh) throws IOException {
        if (!Files.isDirectory(fresh)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(fresh)) {
            return s.filter(p -> p.getFileName().toString().matches("[a-z0-9-]+\\.(cpu|cuda|cuda-emulated)\\.json")).sorted().toList();
        }
    }

    /**
     * A full run must leave an artifact for every declared paper and every committed reference on each backend it
     * ran (the requested one, auto meaning cpu, plus any that wrote an artifact), and must not have skipped a test
     * for want of data. One line per gap.
     */
    static List<String> notRun(Path fresh, Path reports, Path contracts, String backend) throws IOException {
        List<Path> files = freshArtifacts(fresh);
        TreeSet<String> backends = new TreeSet<>();
        backends.add(backend.isEmpty() || backend.equals("auto") ? "cpu" : backend);
        List<String> have = files.stream().map(p -> p.getFileName().toString()).toList();
        have.forEach(name -> backends.add(name.substring(name.indexOf('.') + 1, name.length() - ".json".length())));
        TreeSet<String> wanted = new TreeSet<>();
        for (Manifest m : ManifestLoader.loadAll(contracts)) {
            backends.forEach(b -> wanted.add(m.paper() + "." + b + ".json"));
        }
        if (Files.isDirectory(reports)) {
            try (Stream<Path> s = Files.list(reports)) {
                s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".json") && backends.stream().anyMatch(b -> n.endsWith("." + b + ".json")))
                        .forEach(wanted::add);
            }
        }
        List<String> gaps = new ArrayList<>();
        for (String name : wanted) {
            if (!have.contains(name)) {
                String paper = name.substring(0, name.indexOf('.'));
                gaps.add(paper + ": no fresh artifact " + fresh.resolve(name) + " in this full run"
                        + (Files.exists(reports.resolve(name)) ? " (reports/" + name + " is committed)" : "")
                        + (Files.exists(contracts.resolve(paper + ".json")) ? "" : " (and no contracts/" + paper + ".json declares it)"));
            }
        }
        ListenerErrors.missingData(fresh).forEach(line -> gaps.add("data missing: " + line));
        return gaps;
    }
}
