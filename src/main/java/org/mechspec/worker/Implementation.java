package org.mechspec.worker;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeoutException;
import org.mechspec.data.DataFiles;

/**
 * An outside implementation: the worker command, what its handshake declared, and the running process, started on
 * first use and again after a crash or a timeout ({@code PROTOCOL.md}). One per JVM, from
 * {@code -Dmechspec.implementation}; stopped, with its whole process tree and its exchange folder, when the JVM exits.
 */
public final class Implementation implements AutoCloseable {
    /** The system property holding the worker command. */
    public static final String PROPERTY = "mechspec.implementation";
    /** The system property holding a call's timeout in seconds. */
    public static final String TIMEOUT_PROPERTY = "mechspec.implementation.timeout";
    /** The system property listing the implementation's files, whose SHA-256 go into provenance. */
    public static final String FILES_PROPERTY = "mechspec.implementation.files";
    /** The protocol version this client speaks. */
    public static final int PROTOCOL = 1;
    /**
     * Replies are read strictly: a key given twice is an error, as in the artifact reader, and a line may be as long as
     * {@link WorkerProcess#MAX_LINE_CHARS} (a string inside it too; Jackson's default stops at 20 M characters).
     */
    private static final ObjectMapper JSON = com.fasterxml.jackson.databind.json.JsonMapper.builder(
                    com.fasterxml.jackson.core.JsonFactory.builder().streamReadConstraints(com.fasterxml.jackson.core.StreamReadConstraints
                            .builder().maxStringLength(WorkerProcess.MAX_LINE_CHARS).build()).build())
            .enable(com.fasterxml.jackson.core.StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();
    /** Starting an interpreter and importing NumPy or PyTorch on a loaded machine: the handshake's own allowance. */
    static final long HANDSHAKE_MILLIS = 120_000;
    /** Lines a worker may print before its handshake reply (a banner at import): skipped, the last few quoted on failure. */
    private static final int MAX_LINES_BEFORE_HANDSHAKE = 10_000;
    private static Implementation current;
    /** Why the current command could not start: every contract that needs it fails with this line, without a retry each. */
    private static RuntimeException startFailure;
    private static String failedCommand;

    private final String command;
    private final long timeoutMillis;
    /** SHA-256 of each file named as the implementation, read once when it starts. */
    private final Map<String, String> fileHashes = new TreeMap<>();
    private final Handshake handshake;
    private final Path dir;
    /** Written under the lock; read without it by {@link #close()}, which must not wait for a call in flight. */
    private volatile WorkerProcess process;
    private volatile boolean closed;
    private long nextId = 1;
    private String paper = "";
    private final Map<String, Map<String, Long>> callsByPaper = new TreeMap<>();
    /** What the worker did for the contract invocation running now; null outside one (nothing is counted then). */
    private volatile Usage usage;

    private Implementation(String command, long timeoutMillis, List<Path> files) {
        this.command = command;
        this.timeoutMillis = timeoutMillis;
        for (Path f : files) {
            try {
                fileHashes.put(f.toString(), DataFiles.sha256(Files.readAllBytes(f)));
            } catch (IOException e) {
                throw new UncheckedIOException("--implementation-files: cannot read " + f, e);
            }
        }
        dir = ExchangeFolder.create();
        try {
            handshake = start();
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** The implementation this run judges, or null when {@code -Dmechspec.implementation} is unset. */
    public static synchronized Implementation current() {
        String command = System.getProperty(PROPERTY, "").trim();
        if (command.isEmpty() || command.startsWith("${")) {
            return null;
        }
        if (command.equals(failedCommand)) {
            throw startFailure;
        }
        if (current == null || !current.command.equals(command)) {
            if (current != null) {
                current.close();
            }
            try {
                current = new Implementation(command, timeoutMillis(), files());
            } catch (RuntimeException e) {
                failedCommand = command;
                startFailure = e;
                throw e;
            }
            Implementation started = current;
            // Ctrl-C or SIGTERM: no grace for a worker that may be busy in a call; the run ends within 2 s.
            Runtime.getRuntime().addShutdownHook(new Thread(started::closeAtShutdown, "mechspec-worker-stop"));
        }
        return current;
    }

    /** How long a worker gets to exit on its own when the JVM is shutting down (Ctrl-C, SIGTERM) before it is killed. */
    static final long SHUTDOWN_GRACE_MILLIS = 200;

    /** A worker of its own, outside the run's (its caller closes it). */
    static Implementation start(String command, long timeoutMillis, List<Path> files) {
        return new Implementation(command, timeoutMillis, files);
    }

    /** The private folder the tensors go through. */
    Path folder() {
        return dir;
    }

    /** The worker process's pid, or −1 when none is running. */
    synchronized long pid() {
        return process == null ? -1 : process.pid();
    }

    /** The implementation this run judges if it has started, else null; starts nothing. */
    public static synchronized Implementation started() {
        String command = System.getProperty(PROPERTY, "").trim();
        return current != null && current.command.equals(command) ? current : null;
    }

    /** Stops the current implementation, if any (the end of a run inside a longer-lived JVM). */
    public static synchronized void closeCurrent() {
        if (current != null) {
            current.close();
            current = null;
        }
        failedCommand = null;
        startFailure = null;
    }

    private static long timeoutMillis() {
        String t = System.getProperty(TIMEOUT_PROPERTY, "120").trim();
        try {
            double seconds = Double.parseDouble(t.startsWith("${") || t.isEmpty() ? "120" : t);
            if (!(seconds > 0)) {
                throw new NumberFormatException();
            }
            return (long) Math.ceil(seconds * 1000);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("-D" + TIMEOUT_PROPERTY + " must be a positive number of seconds, got '" + t + "'");
        }
    }

    private static List<Path> files() {
        String f = System.getProperty(FILES_PROPERTY, "").trim();
        List<Path> out = new ArrayList<>();
        if (!f.isEmpty() && !f.startsWith("${")) {
            for (String p : f.split(",")) {
                out.add(Path.of(p.trim()));
            }
        }
        return out;
    }

    /** The id the worker's handshake gave: it names the artifacts {@code <paper>.<id>.json}. */
    public String id() {
        return handshake.name();
    }

    /** What the worker's handshake declared. */
    public Handshake handshake() {
        return handshake;
    }

    /** The command that starts the worker. */
    public String command() {
        return command;
    }

    /** Whether the worker serves {@code op} at {@code precision}. */
    public boolean serves(String op, String precision) {
        List<String> p = handshake.operations().get(op);
        return p != null && p.contains(precision);
    }

    /** The operations of {@code ops} the worker serves, in order. */
    public List<String> served(Collection<String> ops) {
        return ops.stream().filter(handshake.operations()::containsKey).toList();
    }

    /** Attributes the calls that follow to {@code paper}, for its artifact's provenance. */
    public synchronized void enterPaper(String paper) {
        this.paper = paper;
    }

    /**
     * Counts what follows into {@code next} (null: nothing), for one contract invocation or a value it shares; returns
     * what was counted into before, for the caller to restore.
     */
    public Usage track(Usage next) {
        Usage previous = usage;
        usage = next;
        return previous;
    }

    /** The usage counted into now, or null. */
    public Usage tracking() {
        return usage;
    }

    /** The seams' hook: {@code op} was served by mechspec's CPU because the worker does not serve it. */
    public void fellBack(String op) {
        Usage u = usage;
        if (u != null) {
            u.fellBack(op);
        }
    }

    /** A call's end: answered (outputs that passed the checks, or a typed refusal a check judges) or failed. */
    void counted(String op, boolean answered) {
        Usage u = usage;
        if (u != null) {
            if (answered) {
                u.answered(op);
            } else {
                u.failed(op);
            }
        }
    }

    /** A call of {@code op} at {@code precision} to build: inputs, parameters, expected outputs, then run. */
    public Call call(String op, String precision) {
        if (!serves(op, precision)) {
            throw new IllegalStateException(id() + " does not serve " + op + " at " + precision);
        }
        return new Call(this, op, precision);
    }

    /** Sends one request and waits for its reply; a dead or hung worker is stopped, and started again next time. */
    synchronized Map<String, WireTensor> exchange(Call call) {
        if (closed) {
            throw new WorkerException("protocol", "worker " + id() + ": stopped, the run is ending");
        }
        running();
        long id = nextId++;
        Path in = dir.resolve(id + ".in.safetensors");
        Path out = dir.resolve(id + ".out.safetensors");
        String where = "worker " + id() + ": " + call.op + " (" + call.precision + ")";
        try {
            WireFiles.write(in, call.inputs);
            ObjectNode request = JSON.createObjectNode().put("id", id).put("op", call.op).put("precision", call.precision);
            request.set("params", JSON.valueToTree(call.params));
            request.put("inputs", in.toString()).put("outputs", out.toString());
            JsonNode reply = request(request, where);
            if (reply.has("error")) {
                JsonNode e = reply.get("error");
                String type = e.path("type").asText("internal");
                String message = where + " reported " + type + ": " + e.path("message").asText("(no message)");
                if (type.equals("invalid_argument")) {
                    throw new IllegalArgumentException(message);
                }
                throw new WorkerException(type, message);
            }
            if (!Files.exists(out, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                throw new WorkerException("protocol", where + " replied but wrote no " + out.getFileName());
            }
            try {
                return WireFiles.read(out, call.maxOutputBytes());
            } catch (IOException e) {
                throw new WorkerException("protocol", where + ": unreadable outputs file: " + e.getMessage());
            }
        } catch (IOException e) {
            throw new UncheckedIOException(where + ": cannot exchange tensors in " + dir, e);
        } finally {
            callsByPaper.computeIfAbsent(paper, p -> new TreeMap<>()).merge(call.op + " " + call.precision, 1L, Long::sum);
            try {
                Files.deleteIfExists(in);
                Files.deleteIfExists(out);
            } catch (IOException e) {
                // The folder goes at close.
            }
        }
    }

    /** Starts the worker again when it is not running (it exited, or a fault stopped it). */
    private void running() {
        if (process == null || !process.alive()) {
            if (process != null) {
                process.kill();
            }
            Handshake again = start();
            if (!again.equals(handshake)) {
                throw new WorkerException("protocol", "worker " + id() + " restarted as " + again + ", not as the " + handshake + " it began as");
            }
        }
    }

    /**
     * Runs {@code calls} (calls of this implementation) and returns the resident memory the worker's processes gained
     * at their peak meanwhile, measured from outside (Linux: each process's high-water mark reset through
     * /proc/PID/clear_refs before, read from /proc/PID/status after); the worker is started first if it is not
     * running, so its start-up is not counted.
     */
    public synchronized long residentPeakBytes(Runnable calls) {
        if (closed) {
            throw new WorkerException("protocol", "worker " + id() + ": stopped, the run is ending");
        }
        running();
        java.util.Map<Long, Long> before = process.resetResidentPeaks();
        WorkerProcess measured = process;
        calls.run();
        if (process != measured) {
            throw new WorkerException("protocol", "worker " + id() + " restarted while its memory was measured");
        }
        return measured.residentPeakSince(before);
    }

    /** Writes one request line and reads its reply; any fault stops the process and names its last stderr lines. */
    private JsonNode request(ObjectNode request, String where) {
        return request(request, where, timeoutMillis, false);
    }

    /**
     * As above within {@code millis}; {@code banner}: lines before the reply that are not a JSON object are skipped (a
     * worker may print at import, before it serves), up to {@link #MAX_LINES_BEFORE_HANDSHAKE}.
     */
    private JsonNode request(ObjectNode request, String where, long millis, boolean banner) {
        long id = request.get("id").asLong();
        List<String> skipped = new ArrayList<>();
        try {
            process.send(JSON.writeValueAsString(request));
            long deadline = System.nanoTime() + millis * 1_000_000;
            String line = process.receive(millis);
            while (banner && line != null && !line.stripLeading().startsWith("{") && skipped.size() < MAX_LINES_BEFORE_HANDSHAKE) {
                skipped.add(line);
                line = process.receive(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            }
            if (line == null) {
                throw fault(where + ": the worker exited (" + process.state() + ")" + printed(skipped));
            }
            if (line.startsWith(WorkerProcess.TOO_LONG)) {
                throw fault(where + ": a stdout line longer than " + WorkerProcess.MAX_LINE_CHARS + " characters (the protocol's cap)");
            }
            JsonNode reply;
            try {
                reply = JSON.readTree(line);
            } catch (IOException e) {
                throw fault(where + ": stdout line is not JSON: " + abbreviate(line) + " (" + abbreviate(firstLine(e.getMessage())) + ")");
            }
            if (reply == null || !reply.isObject() || reply.path("id").asLong(-1) != id) {
                throw fault(where + ": expected the reply to request " + id + ", got: " + abbreviate(line));
            }
            return reply;
        } catch (TimeoutException e) {
            throw fault(where + ": no reply within " + millis / 1000.0 + " s" + (banner ? "" : " (-D" + TIMEOUT_PROPERTY + ")")
                    + printed(skipped));
        } catch (IOException e) {
            throw fault(where + ": cannot write to the worker (" + e.getMessage() + ")");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw fault(where + ": interrupted");
        }
    }

    private static String printed(List<String> skipped) {
        return skipped.isEmpty() ? "" : "; it printed " + skipped.size() + " line(s) first, the last: "
                + abbreviate(String.join(" | ", skipped.subList(Math.max(0, skipped.size() - 3), skipped.size())));
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }

    private WorkerException fault(String message) {
        WorkerProcess dead = process;
        process = null;
        dead.kill();
        return new WorkerException("protocol", message + "; stderr: " + dead.stderrTail(5));
    }

    private static String abbreviate(String line) {
        return line.length() <= 200 ? line : line.substring(0, 200) + "…";
    }

    /** Starts the process and reads its handshake; an implementation that cannot start is one line saying why. */
    private Handshake start() {
        try {
            process = new WorkerProcess(command, dir);
        } catch (IOException e) {
            throw new WorkerException("protocol", "cannot start the worker '" + command + "': " + e.getMessage());
        }
        ObjectNode hello = JSON.createObjectNode().put("id", 0).put("op", "handshake").put("protocol", PROTOCOL).put("dir", dir.toString());
        JsonNode reply = request(hello, "worker '" + command + "': handshake", Math.max(timeoutMillis, HANDSHAKE_MILLIS), true);
        process.noteDescendants(); // what it started at import is known whether or not the watcher has looked yet
        try {
            return Handshake.of(reply, command);
        } catch (IllegalArgumentException e) {
            throw fault(e.getMessage());
        }
    }

    /** {@link #provenance(String)} of the paper whose contracts run now. */
    public synchronized Map<String, Object> provenance() {
        return provenance(paper);
    }

    /** Provenance of a paper's artifact: the command, the worker, what it served to this paper, the named files' hashes. */
    public synchronized Map<String, Object> provenance(String paper) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("command", command);
        p.put("name", handshake.name());
        p.put("version", handshake.version());
        p.put("operations_declared", handshake.operations());
        p.put("operations_served", new TreeSet<>(callsByPaper.getOrDefault(paper, Map.of()).keySet()));
        p.put("calls", callsByPaper.getOrDefault(paper, Map.of()));
        p.put("files_sha256", fileHashes);
        return p;
    }

    /**
     * Stops the worker (stdin closed, 5 s grace, then its process tree killed) and removes the exchange folder. Not
     * synchronized: a shutdown hook (Ctrl-C) must not wait for a call in flight, which the stop ends with an error.
     */
    @Override
    public void close() {
        close(5000);
    }

    /** As {@link #close()} when the JVM is shutting down: the worker, busy in a call or not, is killed at once. */
    public void closeAtShutdown() {
        close(SHUTDOWN_GRACE_MILLIS);
    }

    /** As {@link #close()}, with {@code graceMillis} for the worker to exit on closed stdin before its tree is killed. */
    void close(long graceMillis) {
        closed = true;
        WorkerProcess running = process;
        if (running != null) {
            running.stop(graceMillis);
        }
        synchronized (this) {
            process = null;
            ExchangeFolder.remove(dir);
        }
    }
}
