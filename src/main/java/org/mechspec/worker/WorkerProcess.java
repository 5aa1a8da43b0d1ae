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

    private final Process process;
    private final OutputStream stdin;
    private final Path stderr;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

    WorkerProcess(String command, Path dir) throws IOException {
        ProcessBuilder b = new ProcessBuilder("/bin/sh", "-c", command);
        b.environment().put("MECHSPEC_WORKER_DIR", dir.toString());
        stderr = dir.resolve("worker.stderr");
        b.redirectError(stderr.toFile()); // truncated for each process: a restart quotes its own lines
        process = b.start();
        stdin = process.getOutputStream();
        daemon("stdout", () -> {
            try (BufferedReader r = reader(process.getInputStream())) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add(line);
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

    void send(String line) throws IOException {
        stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    /** The next stdout line; null at end of output; throws on timeout. */
    String receive(long timeoutMillis) throws InterruptedException, java.util.concurrent.TimeoutException {
        String line = lines.poll(timeoutMillis, TimeUnit.MILLISECONDS);
        if (line == null) {
            throw new java.util.concurrent.TimeoutException();
        }
        return line.equals(EOF) ? null : line;
    }

    long pid() {
        return process.pid();
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
        java.util.List<ProcessHandle> tree = process.descendants().toList(); // before the shell exits and orphans them
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
        tree.forEach(ProcessHandle::destroyForcibly);
        kill();
    }

    /** Kills the worker and everything it started (a shell's children outlive the shell otherwise). */
    void kill() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
