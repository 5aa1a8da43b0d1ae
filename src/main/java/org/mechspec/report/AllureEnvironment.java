package org.mechspec.report;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What the reporter adds to Allure's results besides the tests: environment.properties (devices, commit, JVM),
 * categories.json (check failed, broken, skipped for want of a GPU or of data) and the Trend's history.
 */
final class AllureEnvironment {
    /**
     * Allure's categories, matched on status and message (a skip's message is its reason). Allure files a result under
     * every category it matches, so they are disjoint: not judged (a contract that reached none of an outside
     * implementation's operations, PROTOCOL.md) first, then data, GPU, and any other skip.
     */
    static final String CATEGORIES = """
            [
              {"name": "check failed", "matchedStatuses": ["failed"]},
              {"name": "broken: the contract threw", "matchedStatuses": ["broken"]},
              {"name": "not judged: the implementation computed nothing of it", "matchedStatuses": ["skipped"], "messageRegex": "(?s)not judged: .*"},
              {"name": "skipped: data missing", "matchedStatuses": ["skipped"], "messageRegex": "(?s)(?!not judged: ).*(%1$s).*"},
              {"name": "skipped: no GPU", "matchedStatuses": ["skipped"], "messageRegex": "(?s)(?!not judged: )(?!.*(%1$s)).*(%2$s).*"},
              {"name": "skipped: other reason", "matchedStatuses": ["skipped"], "messageRegex": "(?s)(?!not judged: )(?!.*(%1$s|%2$s)).*"}
            ]
            """.formatted("is absent|data folder|mechspec\\\\.data\\\\.dir", "CUDA|GPU|device|libcuda|CPU backend only");

    private AllureEnvironment() {
    }

    private static Path resultsDir() {
        return Path.of(System.getProperty("allure.results.directory", "target/allure-results"));
    }

    static void writeCategories() {
        try {
            AtomicFiles.write(resultsDir().resolve("categories.json"), CATEGORIES);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + resultsDir().resolve("categories.json"), e);
        }
    }

    /**
     * Adds this run's counts to the Trend kept in {@code keep} (which {@code mvn clean} removes) and puts the trend in
     * the results' history/, where the report generator reads it: the single-file report keeps no history of its own.
     */
    static void trend(Path keep, Map<String, Integer> counts, String name) {
        Path file = keep.resolve("history-trend.json");
        try {
            ArrayNode trend = Files.exists(file)
                    ? (ArrayNode) PaperRun.JSON.readTree(Files.readString(file))
                    : PaperRun.JSON.createArrayNode();
            ObjectNode run = PaperRun.JSON.createObjectNode();
            run.put("buildOrder", trend.size() + 1).put("reportName", name);
            ObjectNode data = run.putObject("data");
            for (String k : List.of("failed", "broken", "skipped", "passed", "unknown")) {
                data.put(k, counts.getOrDefault(k, 0));
            }
            data.put("total", counts.values().stream().mapToInt(Integer::intValue).sum());
            trend.insert(0, run);
            while (trend.size() > 20) {
                trend.remove(trend.size() - 1);
            }
            String text = PaperRun.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(trend) + "\n";
            AtomicFiles.write(file, text);
            AtomicFiles.write(resultsDir().resolve("history").resolve("history-trend.json"), text);
        } catch (IOException | ClassCastException e) {
            throw new UncheckedIOException("cannot keep the Allure trend in " + file, e instanceof IOException io ? io : new IOException(e));
        }
    }

    static void write(Map<String, String> devices, String commit) {
        Path dir = resultsDir();
        StringBuilder p = new StringBuilder();
        devices.forEach((backend, device) -> p.append("device.").append(backend).append('=').append(escape(device)).append('\n'));
        p.append("commit=").append(commit).append('\n');
        p.append("jvm=").append(escape(System.getProperty("java.vm.name") + " " + System.getProperty("java.version"))).append('\n');
        p.append("os=").append(escape(System.getProperty("os.name") + " " + System.getProperty("os.arch"))).append('\n');
        try {
            AtomicFiles.write(dir.resolve("environment.properties"), p.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir.resolve("environment.properties"), e);
        }
    }

    /**
     * The plots of one paper and backend as a result of their own in Allure (epic = paper, feature = plots), with the
     * SVGs attached: they are drawn from the artifact after every test ran, so no test result can carry them.
     */
    static void plotsResult(String paper, String backend, List<Path> svgs) {
        if (svgs.isEmpty()) {
            return;
        }
        Path dir = resultsDir();
        String uuid = UUID.nameUUIDFromBytes(("plots/" + paper + "/" + backend + "/" + System.nanoTime()).getBytes(StandardCharsets.UTF_8)).toString();
        ObjectNode r = PaperRun.JSON.createObjectNode();
        long now = System.currentTimeMillis();
        r.put("uuid", uuid).put("historyId", "mechspec-plots-" + paper + "-" + backend).put("name", paper + " plots (" + backend + ")")
                .put("fullName", "mechspec.plots." + paper + "." + backend).put("status", "passed").put("stage", "finished")
                .put("start", now).put("stop", now)
                .put("description", "Drawn from the artifact reports/" + paper + "." + backend + ".json; every value drawn is"
                        + " listed in the SVG's metadata.");
        ArrayNode labels = r.putArray("labels");
        labels.addObject().put("name", "epic").put("value", paper);
        labels.addObject().put("name", "feature").put("value", "plots");
        labels.addObject().put("name", "story").put("value", backend);
        ArrayNode attachments = r.putArray("attachments");
        try {
            for (Path svg : svgs) {
                String source = UUID.nameUUIDFromBytes((uuid + svg).getBytes(StandardCharsets.UTF_8)) + "-attachment.svg";
                Files.createDirectories(dir);
                Files.copy(svg, dir.resolve(source), StandardCopyOption.REPLACE_EXISTING);
                attachments.addObject().put("name", svg.getFileName().toString()).put("source", source).put("type", "image/svg+xml");
            }
            AtomicFiles.write(dir.resolve(uuid + "-result.json"), PaperRun.JSON.writeValueAsString(r));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the plots' Allure result in " + dir, e);
        }
    }

    private static String escape(String s) {
        return s.replace("\\", "\\\\").replace("\n", " ").replace("=", "\\=").replace(":", "\\:");
    }
}
