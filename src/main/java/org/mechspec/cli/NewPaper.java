package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
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
import java.util.concurrent.Callable;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.mechspec.spec.ExecutedSources;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * The files a new paper needs, from the templates in {@code new-paper/} (their {@code index.txt} lists them), written
 * so the build is red until each is written: the manifest (seeds 42-44, a synthetic dataset, one example check and
 * metric; no artifact template, so the default one), the package with a protocol skeleton and its package-info, the
 * contract class with a seeded and a property half per declared check, and the class with one deliberately broken
 * mechanism per check. Every generated test fails with "not written yet: <what to do>". Run again after declaring
 * more checks, it adds the missing halves and broken mechanisms and touches nothing already there.
 */
@Command(name = "new-paper", mixinStandardHelpOptions = true, header = "Start a paper: manifest, package, contracts, mutants.", description = {
    "Write contracts/KEY.json (seeds 42-44, a synthetic dataset, one example check",
    "and metric), the package org.mechspec.<key without dashes> with a protocol",
    "skeleton, and in src/test its contract class (a seeded and a property half per",
    "declared check) and mutants test. Every generated test fails with 'not written",
    "yet: ...' until written, so the build is red, never falsely green. Run it again",
    "after declaring checks: it adds their missing tests and changes nothing else.",
    "With --project DIR: a paper in a Maven project of its own instead (its pom.xml,",
    "depending on mechspec by its coordinates; package --package, default",
    "org.example.<key without dashes>; README, \"Your own papers\").",
    "All or nothing: a failure part-way puts back every file it wrote.",
    "Exit 0 written, 2 bad key, not a checkout or a file that could not be written."})
final class NewPaper implements Callable<Integer> {
    private static final Pattern KEY = Pattern.compile("[a-z][a-z0-9]*(-[a-z0-9]+)*");
    private static final Pattern NAMED = Pattern.compile("check = \"([a-z0-9_]+)\"");

    @Parameters(index = "0", paramLabel = "KEY", description = "the paper's key, e.g. two-bit-kv (its tag and artifact name)")
    String key;

    @Option(names = "--root", paramLabel = "DIR", description = "the mechspec checkout (default: the current folder)")
    Path root = Path.of("");

    @Option(names = "--project", paramLabel = "DIR", description = "write a Maven project of its own there instead (created if absent)")
    Path project;

    @Option(names = "--package", paramLabel = "P", description = "with --project: the paper's Java package (default: org.example.<key without dashes>)")
    String javaPackage;

    @Spec
    CommandSpec spec;

    private String pkg;
    private String camel;
    final List<String> written = new ArrayList<>();
    /** Every file this run wrote, with its text before (null: it did not exist), so a failure part-way undoes them. */
    private final Map<Path, String> before = new LinkedHashMap<>();
    /** Folders this run created, outermost first. */
    private final List<Path> createdFolders = new ArrayList<>();

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        root = (project != null ? project : root).toAbsolutePath();
        validateKey();
        if (project == null && !Files.isDirectory(root.resolve("src/main/java/org/mechspec/compute"))) {
            throw new InputException(root + " is not a mechspec checkout (no src/main/java/org/mechspec/compute/): run new-paper in"
                    + " one, or pass it as --root DIR; nothing was written");
        }
        try {
            write();
        } catch (IOException | RuntimeException e) {
            String undone = undo();
            String why = e.getMessage() == null ? e.toString() : e.getMessage();
            throw new InputException("cannot write the new paper's files under " + root + ": " + why + "; " + undone);
        }
        if (written.isEmpty()) {
            out.println(key + ": every declared check already has its tests; nothing written");
        } else {
            written.forEach(f -> out.println("wrote " + f));
            out.println(project == null ? "next: mvn -B verify -Dgroups=" + key + " fails with 'not written yet' for each part to write"
                    + " (README, \"Add a paper\")" : "next: mvn -B verify in " + root + " (mechspec installed with mvn install in its checkout)"
                    + " fails with 'not written yet' for each part to write (README, \"Your own papers\")");
        }
        return ExitCodes.OK;
    }

    private void validateKey() {
        if (!KEY.matcher(key).matches()) {
            throw new InputException("paper key '" + key + "' must be lower-case letters and digits in dash-separated words, e.g. two-bit-kv");
        }
        this.pkg = key.replace("-", "");
        this.camel = camel(key.replace('-', '_'), true);
        if (javaPackage != null && project == null) {
            throw new InputException("--package needs --project (a paper mechspec ships lives in org.mechspec.<key without dashes>)");
        }
        if (project != null) {
            javaPackage = javaPackage != null ? javaPackage : "org.example." + pkg;
            if (!javaPackage.matches("[a-z_][a-z0-9_]*(\\.[a-z_][a-z0-9_]*)*") || javaPackage.startsWith("org.mechspec")) {
                throw new InputException("--package '" + javaPackage + "' must be a Java package name of your own, e.g. org.example." + pkg);
            }
        } else if (Set.of("compute", "data", "model", "report", "spec", "cli", "bench", "worker", "tokenize").contains(pkg)) {
            throw new InputException("paper key '" + key + "' would use the shared package org.mechspec." + pkg);
        } else {
            javaPackage = "org.mechspec." + pkg;
        }
    }

    /** Writes what is missing, as the templates' index lists it; the paths written or extended are then in {@link #written}. */
    private void write() throws IOException {
        for (String line : template("index.txt").lines().toList()) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] part = line.split(" ");
            Path file = target(fill(part[1]));
            if (part[0].equals("project")) {
                if (project != null) {
                    createIfAbsent(file, fill(template(part[2])));
                }
            } else if (part[0].equals("create")) {
                createIfAbsent(file, fill(template(part[2])));
                if (part[2].equals("Checks.java.txt")) {
                    refreshMeasured(file);
                }
            } else {
                String block = fill(template(part[3]));
                complete(file, fill(template(part[2])), checks(root.resolve("contracts").resolve(key + ".json")),
                        check -> block.replace("@check@", check).replace("@method@", camel(check, false)));
            }
        }
    }

    /** main/ and test/ are the two source trees' java folders; anything else is relative to the project. */
    private Path target(String path) {
        if (path.startsWith("main/") || path.startsWith("test/")) {
            return root.resolve("src").resolve(path.substring(0, 4)).resolve("java").resolve(path.substring(5));
        }
        return root.resolve(path);
    }

    private String fill(String text) throws IOException {
        String dir = javaPackage.replace('.', '/');
        String out = text.replace("@key@", key).replace("@package@", javaPackage).replace("@dir@", dir).replace("@Camel@", camel)
                .replace("@package_field@", project == null ? "" : "\n  \"package\": \"" + javaPackage + "\",")
                .replace("@group@", javaPackage.substring(0, javaPackage.lastIndexOf('.') < 0 ? javaPackage.length() : javaPackage.lastIndexOf('.')))
;
        if (out.contains("@measured@")) { // one component per metric of the manifest (written first, or the scaffold's own)
            List<String> components = new ArrayList<>();
            manifestTree().path("metrics").forEach(m -> components.add("double " + camel((m.isTextual() ? m : m.path("name")).asText(), false)));
            out = out.replace("@measured@", components.isEmpty() ? "double exampleError" : String.join(", ", components));
        }
        if (out.contains("@baselines_")) { // a manifest written first may declare baselines: the scaffold records them
            boolean declared = !manifestTree().path("baselines").isEmpty();
            out = out.replace("@baselines_record@\n", declared ? "        run.baselines(name -> " + camel + "Checks.figures(" + camel
                    + "Protocol.baseline(name, run.seed())));\n" : "")
                    .replace("@baselines_protocol@\n", declared ? template("baseline.txt").replace("@key@", key) : "");
        }
        if (out.contains("@mechspec_version@")) {
            out = out.replace("@mechspec_version@", mechspecVersion());
        }
        if (out.contains("@sources@")) { // the manifest: what the package, written just before, executes
            out = out.replace("@sources@", project != null ? "\"src/main/java/" + dir + "\"" : String.join(", ", ExecutedSources.of(root, pkg).stream()
                    .sorted((x, y) -> x.endsWith("/" + pkg) ? -1 : y.endsWith("/" + pkg) ? 1 : x.compareTo(y)).map(x -> "\"" + x + "\"").toList()));
        }
        return out;
    }

    /** This mechspec's version (version.properties, filled in by the build), for a project's dependency on it. */
    static String mechspecVersion() {
        try (InputStream in = NewPaper.class.getResourceAsStream("version.properties")) {
            java.util.Properties p = new java.util.Properties();
            if (in == null) {
                throw new IllegalStateException("version.properties is not on the classpath (a build without its resources)");
            }
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static String template(String name) throws IOException {
        try (InputStream in = NewPaper.class.getResourceAsStream("new-paper/" + name)) {
            if (in == null) {
                throw new IOException("template new-paper/" + name + " is not on the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    /** The paper's manifest as JSON, or a missing node where there is none yet. */
    private JsonNode manifestTree() {
        Path manifest = root.resolve("contracts").resolve(key + ".json");
        try {
            return Files.exists(manifest) ? ArtifactFile.JSON.readTree(Files.readString(manifest)) : MissingNode.getInstance();
        } catch (IOException e) {
            throw new InputException(manifest + ": " + e.getMessage());
        }
    }

    private List<String> checks(Path manifest) throws IOException {
        JsonNode checks = ArtifactFile.JSON.readTree(Files.readString(manifest)).path("checks");
        List<String> out = new ArrayList<>();
        checks.forEach(c -> out.add(c.path("name").asText()));
        if (out.isEmpty() || out.stream().anyMatch(n -> !n.matches("[a-z][a-z0-9_]*"))) {
            throw new InputException(manifest + ": 'checks' must list checks named in snake_case, got " + checks);
        }
        return out;
    }

    /** Creates {@code file} with a header and one block per check, or appends the blocks of checks it does not name. */
    private void complete(Path file, String header, List<String> checks, Function<String, String> block) throws IOException {
        boolean exists = Files.exists(file);
        String text = exists ? Files.readString(file) : header + "}\n";
        Set<String> named = new HashSet<>();
        Matcher m = NAMED.matcher(text);
        while (m.find()) {
            named.add(m.group(1));
        }
        List<String> missing = checks.stream().filter(c -> !named.contains(c)).toList();
        // A check the manifest no longer declares (the scaffold's example_check) loses its tests while they are the
        // scaffold's stubs, word for word; tests an author wrote stay, and coverage names them.
        List<String> stale = named.stream().filter(c -> !checks.contains(c) && text.contains(block.apply(c))).sorted().toList();
        if (exists && missing.isEmpty() && stale.isEmpty()) {
            return;
        }
        String kept = text;
        for (String c : stale) {
            kept = kept.contains(block.apply(c) + "\n") ? kept.replace(block.apply(c) + "\n", "") : kept.replace(block.apply(c), "");
        }
        String body = kept.substring(0, kept.lastIndexOf('}')).stripTrailing();
        writeFile(file, body + "\n" + (exists && !missing.isEmpty() ? "\n" : "") + String.join("\n", missing.stream().map(block).toList()) + "}\n");
        written.add(root.relativize(file) + (exists ? changes(missing, stale) : ""));
    }

    private static String changes(List<String> added, List<String> removed) {
        List<String> parts = new ArrayList<>();
        if (!added.isEmpty()) {
            parts.add("added " + String.join(", ", added));
        }
        if (!removed.isEmpty()) {
            parts.add("removed the stubs of " + String.join(", ", removed) + ", no longer declared");
        }
        return " (" + String.join("; ", parts) + ")";
    }

    /**
     * A Checks file still holding the scaffold's {@code Measured(double exampleError)} gets the manifest's metrics once
     * the manifest declares others (checks declared after the first scaffold).
     */
    private void refreshMeasured(Path file) throws IOException {
        String stub = "record Measured(double exampleError)";
        String now = fill("record Measured(@measured@)");
        String text = Files.readString(file);
        if (!now.equals(stub) && text.contains(stub)) {
            writeFile(file, text.replace(stub, now));
            written.add(root.relativize(file) + " (Measured: the manifest's metrics)");
        }
    }

    private void createIfAbsent(Path file, String text) throws IOException {
        if (!Files.exists(file)) {
            writeFile(file, text);
            written.add(root.relativize(file).toString());
        }
    }

    private void writeFile(Path file, String text) throws IOException {
        List<Path> missing = new ArrayList<>();
        for (Path d = file.getParent(); d != null && !Files.exists(d); d = d.getParent()) {
            missing.add(0, d);
        }
        Files.createDirectories(file.getParent());
        createdFolders.addAll(missing);
        if (!before.containsKey(file)) {
            before.put(file, Files.exists(file) ? Files.readString(file) : null);
        }
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }

    /** Puts back every file and folder this run changed, newest first: all or nothing. Says what it did. */
    private String undo() {
        List<Path> files = new ArrayList<>(before.keySet());
        java.util.Collections.reverse(files);
        List<String> failed = new ArrayList<>();
        for (Path f : files) {
            try {
                if (before.get(f) == null) {
                    Files.deleteIfExists(f);
                } else {
                    Files.writeString(f, before.get(f), StandardCharsets.UTF_8);
                }
            } catch (IOException e) {
                failed.add(root.relativize(f).toString());
            }
        }
        for (int i = createdFolders.size() - 1; i >= 0; i--) {
            try {
                Files.deleteIfExists(createdFolders.get(i));
            } catch (IOException e) {
                failed.add(root.relativize(createdFolders.get(i)) + "/");
            }
        }
        written.clear();
        return failed.isEmpty() ? "nothing was written" : "could not undo " + String.join(", ", failed);
    }

    /** snake_case (or a key with '_' for '-') to camelCase; {@code upper} capitalises the first word too. */
    static String camel(String snake, boolean upper) {
        StringBuilder b = new StringBuilder();
        for (String word : snake.split("_")) {
            if (!word.isEmpty()) {
                b.append(b.length() == 0 && !upper ? word : word.substring(0, 1).toUpperCase(Locale.ROOT) + word.substring(1));
            }
        }
        return b.toString();
    }
}
