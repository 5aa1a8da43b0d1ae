package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.mechspec.report.AtomicFiles;

/**
 * A mechspec run spread over a Slurm array: one task per paper × seed, each {@code bin/mechspec run} into
 * {@code DIR/shards/<paper>-<seed>} with its own log, then a merge job. Everything is written under DIR with absolute
 * paths, so tasks on other nodes find the command, the data and DIR on shared storage. {@code plan.json} keeps what
 * status, resubmit and the merge job read back.
 */
record SlurmPlan(Path dir, String launcher, String backend, String dataDir, String checkpoint, List<Task> tasks, List<String> sbatchOptions) {
    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    static final String PLAN = "plan.json";
    static final String ARRAY_SCRIPT = "array.sbatch";
    static final String MERGE_SCRIPT = "merge.sbatch";

    /** One array task: a paper on one seed. */
    record Task(int index, String paper, long seed) {
        String name() {
            return paper + "-" + seed;
        }
    }

    Path shard(Task t) {
        return dir.resolve("shards").resolve(t.name());
    }

    /** The task's exit status, written by its script after the run (absent: it did not get that far). */
    Path exitFile(Task t) {
        return dir.resolve("status").resolve(t.name() + ".exit");
    }

    Path log(Task t) {
        return dir.resolve("logs").resolve("task-" + t.index() + ".log");
    }

    /** The task's exit code, or null when it left none (still queued or running, killed, timed out, never started). */
    Integer exitCode(Task t) {
        try {
            return Files.isRegularFile(exitFile(t)) ? Integer.valueOf(Files.readString(exitFile(t)).strip()) : null;
        } catch (IOException | NumberFormatException e) {
            return null;
        }
    }

    void write() throws IOException {
        Files.createDirectories(dir.resolve("logs"));
        Files.createDirectories(dir.resolve("status"));
        Files.createDirectories(dir.resolve("shards"));
        ObjectNode n = JSON.createObjectNode();
        n.put("launcher", launcher);
        n.put("backend", backend);
        n.put("data_dir", dataDir);
        n.put("checkpoint", checkpoint);
        n.set("sbatch_options", JSON.valueToTree(sbatchOptions));
        ArrayNode ts = n.putArray("tasks");
        tasks.forEach(t -> ts.addObject().put("index", t.index()).put("paper", t.paper()).put("seed", t.seed()));
        AtomicFiles.write(dir.resolve(PLAN), JSON.writeValueAsString(n) + "\n");
        writeScript(ARRAY_SCRIPT, arrayScript());
        writeScript(MERGE_SCRIPT, mergeScript());
    }

    static SlurmPlan read(Path dir) throws IOException {
        Path file = dir.resolve(PLAN);
        if (!Files.isRegularFile(file)) {
            throw new InputException(dir + ": no " + PLAN + " (not a folder written by mechspec slurm submit)");
        }
        JsonNode n = JSON.readTree(file.toFile());
        List<Task> tasks = new ArrayList<>();
        n.path("tasks").forEach(t -> tasks.add(new Task(t.path("index").asInt(), t.path("paper").asText(), t.path("seed").asLong())));
        List<String> options = new ArrayList<>();
        n.path("sbatch_options").forEach(o -> options.add(o.asText()));
        return new SlurmPlan(dir.toAbsolutePath(), n.path("launcher").asText(), n.path("backend").asText(), text(n, "data_dir"),
                text(n, "checkpoint"), tasks, options);
    }

    private static String text(JsonNode n, String field) {
        return n.path(field).isTextual() ? n.path(field).asText() : null;
    }

    private void writeScript(String name, String text) throws IOException {
        Path file = dir.resolve(name);
        AtomicFiles.write(file, text);
        file.toFile().setExecutable(true);
    }

    private String header(String jobName, String output) {
        StringBuilder b = new StringBuilder("#!/bin/bash\n");
        b.append("# Written by mechspec slurm submit (src/site/markdown/gpu.md, \"Several machines\").\n");
        b.append("#SBATCH --job-name=").append(jobName).append('\n');
        b.append("#SBATCH --output=").append(output).append('\n');
        for (String o : sbatchOptions) {
            b.append("#SBATCH ").append(o).append('\n');
        }
        return b.toString();
    }

    String arrayScript() {
        StringBuilder b = new StringBuilder(header("mechspec-shards", dir.resolve("logs").resolve("task-%a.log").toString()));
        b.append("#SBATCH --array=0-").append(tasks.size() - 1).append('\n');
        b.append("set -u\ncase \"$SLURM_ARRAY_TASK_ID\" in\n");
        for (Task t : tasks) {
            b.append("    ").append(t.index()).append(") paper=").append(t.paper()).append(" seed=").append(t.seed()).append(" ;;\n");
        }
        b.append("    *) echo \"mechspec: no task $SLURM_ARRAY_TASK_ID in ").append(dir.resolve(PLAN)).append("\" >&2; exit 2 ;;\nesac\n");
        b.append("name=\"$paper-$seed\"\n");
        b.append("echo \"mechspec: task $SLURM_ARRAY_TASK_ID: $name on $(hostname)\"\n");
        b.append(quote(launcher)).append(" run --paper \"$paper\" --seeds \"$seed\" --backend ").append(backend);
        if (dataDir != null) {
            b.append(" --data-dir ").append(quote(dataDir));
        }
        if (checkpoint != null) {
            b.append(" --checkpoint ").append(quote(checkpoint));
        }
        b.append(" --out ").append(quote(dir.resolve("shards").toString())).append("/\"$name\" --quiet\n");
        b.append("code=$?\n");
        b.append("echo \"$code\" > ").append(quote(dir.resolve("status").toString())).append("/\"$name.exit\"\n");
        b.append("exit \"$code\"\n");
        return b.toString();
    }

    String mergeScript() {
        return header("mechspec-merge", dir.resolve("logs").resolve("merge-%j.log").toString())
                + "set -u\nexec " + quote(launcher) + " slurm merge " + quote(dir.toString()) + "\n";
    }

    /** A single-quoted shell word. */
    static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
