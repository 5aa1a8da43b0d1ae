package org.mechspec.worker;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One running worker: {@code /bin/sh -c CMD}, its stdin for requests, its stdout read line by line on a thread of its
 * own (so a read can time out), and its stderr in a file of the exchange folder, whose last lines error messages quote
 * (a file keeps a dying worker's last words, which a pipe read on another thread can lose as the process ends).
 */
final class WorkerProcess {
    /** How much of the stderr file's end is read for its last lines. */
    private static final int TAIL_BYTES = 64 * 1024;
    private static final String EOF = "\u0000eof";
    /** The protocol's cap on one stdout line (PROTOCOL.md): a longer line is reported, never held in memory. */
    static final int MAX_LINE_CHARS = 64 << 20;
    /** How long a line already written by a worker that has exited may take to reach the queue (a busy machine). */
    private static final long AFTER_EXIT_MILLIS = 1000;
    /** Stands for a line past the cap, followed by its length. */
    static final String TOO_LONG = "\u0000too long:";

    private final Process process;
    private final OutputStream stdin;
    private final Path stderr;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final java.util.Set<ProcessHandle> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** util-linux's setsid where there is one (every Linux distribution); without it the worker shares mechspec's group. */
    private static final java.util.Optional<String> SETSID = java.util.stream.Stream.of("/usr/bin/setsid", "/bin/setsid")
            .filter(p -> java.nio.file.Files.isExecutable(Path.of(p))).findFirst();

    WorkerProcess(String command, Path dir) throws IOException {
        // A session of its own (setsid): a terminal's Ctrl-C reaches mechspec, not the worker first, and the worker's
        // process group is one kill away, children re-parented to init included.
        ProcessBuilder b = new ProcessBuilder(SETSID.map(p -> List.of(p, "-w", "/bin/sh", "-c", command)).orElse(List.of("/bin/sh", "-c", command)));
        b.environment().put("MECHSPEC_WORKER_DIR", dir.toString());
        stderr = dir.resolve("worker.stderr");
        b.redirectError(stderr.toFile()); // truncated for each process: a restart quotes its own lines
        process = b.start();
        stdin = process.getOutputStream();
        // Every descendant ever seen, so a stop reaches those that left the group or outlived their parent.
        daemon("watch", () -> {
            while (process.isAlive()) {
                process.descendants().forEach(seen::add);
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        daemon("stdout", () -> {
            try (BufferedReader r = reader(process.getInputStream())) {
                StringBuilder line = new StringBuilder();
                long length = 0;
                for (int c; (c = r.read()) != -1; ) {
                    if (c == '\n') {
                        lines.add(length > MAX_LINE_CHARS ? TOO_LONG + length : line.toString());
                        line.setLength(0);
                        length = 0;
                    } else if (++length <= MAX_LINE_CHARS) {
                        line.append((char) c);
                    } else {
                        line.setLength(0); // past the cap: counted, not kept
                    }
                }
                if (length > 0) {
                    lines.add(length > MAX_LINE_CHARS ? TOO_LONG + length : line.toString());
                }
            } catch (IOException e) {
                // The process went away; the EOF below says so.
            }
            lines.add(EOF);
        });
    }

    private static BufferedReader reader(java.io.InputStream in) {
        return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    }

    private void daemon(String what, Runnable body) {
        Thread t = new Thread(body, "mechspec-worker-" + what + "-" + process.pid());
        t.setDaemon(true);
        t.start();
    }

    /** Records the descendants the worker has now (after its handshake: what it started at import), beside the watcher. */
    void noteDescendants() {
        process.descendants().forEach(seen::add);
    }

    void send(String line) throws IOException {
        stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    /** The next stdout line; null at end of output; throws on timeout. */
    String receive(long timeoutMillis) throws InterruptedException, java.util.concurrent.TimeoutException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        for (long left = timeoutMillis; left > 0; left = (deadline - System.nanoTime()) / 1_000_000) {
            String line = lines.poll(Math.min(left, 100), TimeUnit.MILLISECONDS);
            if (line != null) {
                return line.equals(EOF) ? null : line;
            }
            if (!process.isAlive()) {
                // Exited: its stdout may stay open in children it left behind, so the exit, not EOF, ends the wait,
                // once the reader thread has had time to pass on what it wrote before exiting (a reply, then a crash).
                line = lines.poll(AFTER_EXIT_MILLIS, TimeUnit.MILLISECONDS);
                return line == null || line.equals(EOF) ? null : line;
            }
        }
        throw new java.util.concurrent.TimeoutException();
    }

    long pid() {
        return process.pid();
    }

    /**
     * Resets the resident-memory high-water mark (VmHWM) of the worker and every live descendant to its present
     * resident size (Linux's {@code echo 5 > /proc/PID/clear_refs}); returns each process's resident bytes then.
     */
    java.util.Map<Long, Long> resetResidentPeaks() {
        java.util.Map<Long, Long> before = new java.util.HashMap<>();
        for (ProcessHandle p : processes()) {
            Path proc = Path.of("/proc", Long.toString(p.pid()));
            try {
                java.nio.file.Files.writeString(proc.resolve("clear_refs"), "5");
                before.put(p.pid(), statusBytes(proc, "VmRSS:"));
            } catch (IOException e) {
                if (p.isAlive()) {
                    throw new java.io.UncheckedIOException("cannot reset the peak resident memory of worker process " + p.pid()
                            + " (Linux's /proc/PID/clear_refs is needed)", e);
                }
            }
        }
        return before;
    }

    /**
     * The resident memory the worker's processes gained since {@link #resetResidentPeaks}: Σ over them of VmHWM − the
     * resident size at the reset (a process started since counts whole). A process that started and ended in between is
     * not seen.
     */
    long residentPeakSince(java.util.Map<Long, Long> before) {
        long gained = 0;
        for (ProcessHandle p : processes()) {
            try {
                long peak = statusBytes(Path.of("/proc", Long.toString(p.pid())), "VmHWM:");
                gained += Math.max(0, peak - before.getOrDefault(p.pid(), 0L));
            } catch (IOException e) {
                // Ended since: its memory is gone with it.
            }
        }
        return gained;
    }

    /** The worker, its descendants, and those seen before that left its tree (a double fork), each once. */
    private List<ProcessHandle> processes() {
        java.util.Set<ProcessHandle> all = new java.util.LinkedHashSet<>();
        all.add(process.toHandle());
        process.descendants().forEach(all::add);
        seen.stream().filter(ProcessHandle::isAlive).forEach(all::add);
        return List.copyOf(all);
    }

    /** A "Name:  N kB" line of /proc/PID/status, in bytes. */
    private static long statusBytes(Path proc, String name) throws IOException {
        for (String line : java.nio.file.Files.readAllLines(proc.resolve("status"))) {
            if (line.startsWith(name)) {
                String[] f = line.substring(name.length()).trim().split("\\s+");
                return Long.parseLong(f[0]) * 1024;
            }
        }
        throw new IOException(proc.resolve("status") + " has no " + name + " line");
    }

    boolean alive() {
        return process.isAlive();
    }

    /** "exit code N" once the process has ended, else "still running". */
    String state() {
        try {
            if (process.waitFor(200, TimeUnit.MILLISECONDS)) {
                return "exit code " + process.exitValue();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return "still running";
    }

    /** The last {@code n} lines of stderr, joined with " | ", or "(no stderr)". */
    String stderrTail(int n) {
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(stderr.toFile(), "r")) {
            long from = Math.max(0, f.length() - TAIL_BYTES);
            byte[] end = new byte[(int) (f.length() - from)];
            f.seek(from);
            f.readFully(end);
            List<String> tail = new String(end, StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).toList();
            return tail.isEmpty() ? "(no stderr)" : String.join(" | ", tail.subList(Math.max(0, tail.size() - n), tail.size()));
        } catch (IOException e) {
            return "(stderr unreadable: " + e.getMessage() + ")";
        }
    }

    /** Closes stdin (the worker's cue to exit), waits up to {@code graceMillis}, then kills the whole process tree. */
    void stop(long graceMillis) {
        process.descendants().forEach(seen::add); // before the shell exits and orphans them
        try {
            stdin.close();
        } catch (IOException e) {
            // Already gone.
        }
        try {
            process.waitFor(graceMillis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        kill();
    }

    /**
     * Kills the worker and everything it started (a shell's children outlive the shell otherwise): its process group,
     * every descendant it has now, and every descendant the watcher saw, wherever it went since.
     */
    void kill() {
        process.descendants().forEach(seen::add);
        if (SETSID.isPresent()) {
            try {
                new ProcessBuilder("kill", "-KILL", "--", "-" + process.pid()).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor(5, TimeUnit.SECONDS);
            } catch (IOException e) {
                // No kill command: the handles below still go.
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        seen.forEach(ProcessHandle::destroyForcibly);
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
