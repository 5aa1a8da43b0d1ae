package org.mechspec.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import org.mechspec.compute.Backends;
import org.mechspec.report.AtomicFiles;
import org.mechspec.report.OutputFolder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code mechspec slurm}: a run as a Slurm array of paper × seed shards and a merge job (src/site/markdown/gpu.md, "Several machines"). */
@Command(name = "slurm", mixinStandardHelpOptions = true, header = "Run on a Slurm cluster: paper × seed shards as an array job, then a merge job.",
        subcommands = {SlurmCommand.Submit.class, SlurmCommand.Status.class, SlurmCommand.Resubmit.class, SlurmMerge.class})
final class SlurmCommand implements Runnable {
    static final String JOBS = "jobs.json";

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "name a subcommand: submit, status, resubmit or merge");
    }

    /** The command the tasks run: bin/mechspec of the bundle or of target/mechspec, as its launcher says. */
    static String launcher() {
        String l = System.getProperty("mechspec.launcher", "");
        if (l.isBlank() || !Files.isExecutable(Path.of(l))) {
            throw new InputException("slurm needs the mechspec command's path for its tasks: run it as bin/mechspec (the bundle's or"
                    + " target/mechspec's), which passes -Dmechspec.launcher");
        }
        return Path.of(l).toAbsolutePath().normalize().toString();
    }

    /** Runs sbatch (or another Slurm command) and returns its stdout; a non-zero exit is one line with its stderr. */
    static String slurm(List<String> command) throws IOException {
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(false).start();
        } catch (IOException e) {
            throw new InputException(command.get(0) + " not found: is this a Slurm login node? (" + e.getMessage() + ")");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (p.waitFor() != 0) {
                throw new InputException(String.join(" ", command) + " failed: " + (err + out).strip().replace('\n', ' '));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + String.join(" ", command), e);
        }
        return out.strip();
    }

    /** Submits the array (all tasks, or those listed) and a merge job after it; records both in jobs.json. */
    static String[] submit(SlurmPlan plan, List<SlurmPlan.Task> tasks) throws IOException {
        List<String> array = new ArrayList<>(List.of("sbatch", "--parsable"));
        if (tasks.size() != plan.tasks().size()) {
            array.add("--array=" + tasks.stream().map(t -> Integer.toString(t.index())).collect(Collectors.joining(",")));
        }
        array.add(plan.dir().resolve(SlurmPlan.ARRAY_SCRIPT).toString());
        String arrayId = jobId(slurm(array));
        String mergeId = jobId(slurm(List.of("sbatch", "--parsable", "--dependency=afterany:" + arrayId,
                plan.dir().resolve(SlurmPlan.MERGE_SCRIPT).toString())));
        ObjectNode jobs = jobs(plan.dir());
        ObjectNode s = ((ArrayNode) jobs.withArray("submissions")).addObject();
        s.put("array", arrayId);
        s.put("merge", mergeId);
        s.set("tasks", SlurmPlan.JSON.valueToTree(tasks.stream().map(SlurmPlan.Task::index).toList()));
        AtomicFiles.write(plan.dir().resolve(JOBS), SlurmPlan.JSON.writeValueAsString(jobs) + "\n");
        return new String[] {arrayId, mergeId};
    }

    /** sbatch --parsable prints "id" or "id;cluster". */
    private static String jobId(String parsable) {
        String id = parsable.lines().reduce((a, b) -> b).orElse("").split(";")[0].strip();
        if (!id.matches("\\d+")) {
            throw new InputException("sbatch gave no job id: '" + parsable + "'");
        }
        return id;
    }

    static ObjectNode jobs(Path dir) throws IOException {
        Path f = dir.resolve(JOBS);
        return Files.isRegularFile(f) ? (ObjectNode) SlurmPlan.JSON.readTree(f.toFile()) : SlurmPlan.JSON.createObjectNode();
    }

    @Command(name = "submit", mixinStandardHelpOptions = true, header = "Write and submit the array and merge jobs.", description = {
        "Writes DIR/plan.json, DIR/array.sbatch (one task per paper x seed: bin/mechspec run into DIR/shards/<paper>-<seed>,",
        "log DIR/logs/task-<i>.log) and DIR/merge.sbatch (afterany the array: merges per paper and backend, validates, writes",
        "DIR/merged/ and names each failed shard), submits both with sbatch --parsable and prints the job ids.",
        "Options after -- go to sbatch as #SBATCH lines. Exit 0 submitted (or written with --dry-run), 2 bad options or sbatch failed."})
    static final class Submit implements Callable<Integer> {
        @Option(names = "--paper", paramLabel = "P", description = "only this paper (repeatable; default: all)")
        List<String> papers = new ArrayList<>();

        @Option(names = "--seeds", paramLabel = "S,S", description = "only these manifest seeds (default: each paper's)")
        String seeds = "";

        @Option(names = "--backend", paramLabel = "B", defaultValue = "auto", description = "as mechspec run's (default: ${DEFAULT-VALUE})")
        String backend;

        @Option(names = "--data-dir", paramLabel = "DIR", description = "data sets folder, on storage every node sees")
        Path dataDir;

        @Option(names = "--checkpoint", paramLabel = "DIR", description = "a checkpoint folder, on storage every node sees")
        Path checkpoint;

        @Option(names = "--out", paramLabel = "DIR", required = true, description = "the run's folder, on storage every node sees")
        Path out;

        @Option(names = "--partition", paramLabel = "P")
        String partition;

        @Option(names = "--gres", paramLabel = "G", description = "e.g. gpu:1 for --backend cuda")
        String gres;

        @Option(names = "--time", paramLabel = "T", description = "each task's time limit, e.g. 00:30:00")
        String time;

        @Option(names = "--account", paramLabel = "A")
        String account;

        @Option(names = "--dry-run", description = "write the scripts and print them; submit nothing")
        boolean dryRun;

        @Parameters(paramLabel = "SBATCH_OPTION", description = "after --: more sbatch options, e.g. -- --mem=16G --qos=short")
        List<String> extra = new ArrayList<>();

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws IOException {
            PrintWriter stdout = spec.commandLine().getOut();
            if (!Backends.NAMES.contains(backend)) {
                throw new ParameterException(spec.commandLine(), "--backend must be one of " + String.join(", ", Backends.NAMES));
            }
            String refused = OutputFolder.refusal("--out", out);
            if (refused != null) {
                throw new InputException(refused);
            }
            if (dataDir != null && !Files.isDirectory(dataDir)) {
                throw new InputException("--data-dir " + dataDir + ": no such folder");
            }
            if (checkpoint != null && !Files.isRegularFile(checkpoint.resolve("config.json"))) {
                throw new InputException("--checkpoint " + checkpoint + ": not a checkpoint folder (no config.json)");
            }
            Manifests manifests = Manifests.contracts();
            List<String> selected = papers.isEmpty() ? manifests.papers() : papers;
            String unknown = RunCommand.unknownSeeds(manifests, selected, seeds);
            if (unknown != null) {
                throw new InputException(unknown);
            }
            List<Long> wanted = seeds.isBlank() ? null : Arrays.stream(seeds.split(",")).map(s -> Long.valueOf(s.strip())).toList();
            List<SlurmPlan.Task> tasks = new ArrayList<>();
            for (String paper : selected) {
                for (long seed : manifests.forPaper(paper).seeds()) {
                    if (wanted == null || wanted.contains(seed)) {
                        tasks.add(new SlurmPlan.Task(tasks.size(), paper, seed));
                    }
                }
            }
            List<String> options = new ArrayList<>();
            add(options, "--partition", partition);
            add(options, "--gres", gres);
            add(options, "--time", time);
            add(options, "--account", account);
            options.addAll(extra);
            OutputFolder.create(out);
            SlurmPlan plan = new SlurmPlan(out.toAbsolutePath().normalize(), launcher(), backend,
                    dataDir == null ? null : dataDir.toAbsolutePath().normalize().toString(),
                    checkpoint == null ? null : checkpoint.toAbsolutePath().normalize().toString(), tasks, options);
            plan.write();
            stdout.println("wrote " + plan.dir().resolve(SlurmPlan.ARRAY_SCRIPT) + " (" + tasks.size() + " tasks) and "
                    + plan.dir().resolve(SlurmPlan.MERGE_SCRIPT));
            if (dryRun) {
                stdout.println(plan.arrayScript());
                stdout.println(plan.mergeScript());
                stdout.println("dry run: nothing submitted");
                return ExitCodes.OK;
            }
            String[] ids = SlurmCommand.submit(plan, tasks);
            stdout.println("submitted array job " + ids[0] + " (" + tasks.size() + " tasks) and merge job " + ids[1]
                    + "; mechspec slurm status " + plan.dir());
            return ExitCodes.OK;
        }

        private static void add(List<String> options, String name, String value) {
            if (value != null) {
                options.add(name + "=" + value);
            }
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true, header = "Each task's state, from squeue, sacct and the tasks' exit files.")
    static final class Status implements Callable<Integer> {
        @Parameters(paramLabel = "DIR", description = "the folder given to submit --out")
        Path dir;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws IOException {
            PrintWriter stdout = spec.commandLine().getOut();
            SlurmPlan plan = SlurmPlan.read(dir);
            Map<String, String> queued = queued(plan);
            Map<String, String> accounted = accounted(plan);
            stdout.printf("%-4s %-24s %-36s %s%n", "task", "shard", "state", "log");
            for (SlurmPlan.Task t : plan.tasks()) {
                stdout.printf("%-4d %-24s %-36s %s%n", t.index(), t.name(), state(plan, t, queued, accounted), plan.log(t));
            }
            JsonNode last = lastSubmission(plan.dir());
            if (last != null) {
                String merge = last.path("merge").asText();
                String q = queued.get(merge);
                Path summary = plan.dir().resolve("merged").resolve("summary.md");
                stdout.println("merge job " + merge + ": " + (q != null ? q.toLowerCase(java.util.Locale.ROOT)
                        : Files.exists(summary) ? "done, " + summary : "not in the queue, no summary yet (see " + plan.dir().resolve("logs") + ")"));
            }
            return ExitCodes.OK;
        }
    }

    @Command(name = "resubmit", mixinStandardHelpOptions = true, header = "Submit only the failed shards, and a new merge job.")
    static final class Resubmit implements Callable<Integer> {
        @Parameters(paramLabel = "DIR", description = "the folder given to submit --out")
        Path dir;

        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws IOException {
            PrintWriter stdout = spec.commandLine().getOut();
            SlurmPlan plan = SlurmPlan.read(dir);
            Map<String, String> queued = queued(plan);
            List<SlurmPlan.Task> failed = new ArrayList<>();
            for (SlurmPlan.Task t : plan.tasks()) {
                if (failed(plan, t, queued)) {
                    failed.add(t);
                }
            }
            if (failed.isEmpty()) {
                stdout.println("nothing to resubmit: no shard failed");
                return ExitCodes.OK;
            }
            for (SlurmPlan.Task t : failed) {
                Files.deleteIfExists(plan.exitFile(t));
            }
            String[] ids = SlurmCommand.submit(plan, failed);
            stdout.println("resubmitted " + failed.stream().map(SlurmPlan.Task::name).collect(Collectors.joining(", ")) + " as array job "
                    + ids[0] + ", merge job " + ids[1]);
            return ExitCodes.OK;
        }
    }

    /** A shard that ended without success: a non-zero exit, or out of the queue without an exit file. */
    static boolean failed(SlurmPlan plan, SlurmPlan.Task t, Map<String, String> queued) {
        Integer code = plan.exitCode(t);
        return code != null ? code != 0 : !queued.containsKey(taskKey(plan, t)) && submittedOnce(plan);
    }

    private static boolean submittedOnce(SlurmPlan plan) {
        try {
            return lastSubmission(plan.dir()) != null;
        } catch (IOException e) {
            return false;
        }
    }

    static String state(SlurmPlan plan, SlurmPlan.Task t, Map<String, String> queued, Map<String, String> accounted) {
        String q = queued.get(taskKey(plan, t));
        if (q != null) {
            return q.toLowerCase(java.util.Locale.ROOT);
        }
        Integer code = plan.exitCode(t);
        if (code == null) {
            String sacct = accounted.get(taskKey(plan, t));
            return !submittedOnce(plan) ? "not submitted"
                    : "failed: ended without an exit code" + (sacct == null ? "" : " (sacct: " + sacct + ")");
        }
        return code == 0 ? "done" : code == ExitCodes.FINDINGS ? "done, a contract failed (exit 1)" : "failed (exit " + code + ")";
    }

    /** The latest array job's id and the task index, as squeue prints them ("123_4"). */
    private static String taskKey(SlurmPlan plan, SlurmPlan.Task t) {
        try {
            JsonNode last = lastSubmission(plan.dir());
            return last == null ? "" : last.path("array").asText() + "_" + t.index();
        } catch (IOException e) {
            return "";
        }
    }

    private static JsonNode lastSubmission(Path dir) throws IOException {
        JsonNode s = jobs(dir).path("submissions");
        return s.isArray() && !s.isEmpty() ? s.get(s.size() - 1) : null;
    }

    /** sacct's state of each task of the latest array job (TIMEOUT, NODE_FAIL...); empty where accounting is off. */
    private static Map<String, String> accounted(SlurmPlan plan) {
        Map<String, String> states = new LinkedHashMap<>();
        try {
            JsonNode last = lastSubmission(plan.dir());
            if (last != null) {
                for (String line : slurm(List.of("sacct", "--noheader", "--parsable2", "--allocations", "--jobs=" + last.path("array").asText(),
                        "--format=JobID,State")).lines().toList()) {
                    String[] f = line.split("\\|");
                    if (f.length == 2) {
                        states.put(f[0], f[1]);
                    }
                }
            }
        } catch (IOException | InputException e) {
            // accounting storage is optional in Slurm; the exit files still tell what finished
        }
        return states;
    }

    /** Job and array-task ids of the latest submission still queued or running, with their state. */
    static Map<String, String> queued(SlurmPlan plan) throws IOException {
        Map<String, String> states = new LinkedHashMap<>();
        JsonNode last = lastSubmission(plan.dir());
        if (last == null) {
            return states;
        }
        String out;
        try {
            out = slurm(List.of("squeue", "--noheader", "--array", "--jobs=" + last.path("array").asText() + "," + last.path("merge").asText(),
                    "--format=%i %T"));
        } catch (InputException e) {
            if (!e.getMessage().contains("Invalid job id")) {
                throw e;
            }
            out = ""; // every job of the submission has left the queue
        }
        for (String line : out.lines().toList()) {
            String[] f = line.strip().split("\\s+");
            if (f.length == 2) {
                states.put(f[0], f[1]);
            }
        }
        return states;
    }
}
