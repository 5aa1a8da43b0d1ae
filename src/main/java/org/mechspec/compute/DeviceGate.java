package org.mechspec.compute;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Build step before the tests, in a JVM of its own: when a CUDA backend was asked for
 * ({@code -Dmechspec.backend=cuda|cuda-emulated}) and cannot run, stop the build with one line saying why instead
 * of a wall of failed GPU tests. The probe releases its context before this JVM exits, and nothing else here
 * creates one. args: the requested backend, and optionally a verdict file.
 *
 * <p>Without a verdict file a refusal exits 1. With one (the build's {@code device-gate} execution), the gate
 * prints its line, writes it to that file (an empty file: no refusal) and exits 0, and the build's
 * {@code device-gate-verdict} step fails on a non-empty one: exec-maven-plugin logs a non-zero exit of a forked JVM with a 30-line stack trace of its own,
 * which would bury the line.
 */
public final class DeviceGate {
    private DeviceGate() {
    }

    /** args: the backend asked for, and the file to leave the refusal in (empty when the run may go on). */
    public static void main(String[] args) throws IOException {
        Path verdictFile = args.length > 1 && !args[1].isBlank() ? Path.of(args[1]) : null;
        String refusal = refusal(args.length > 0 ? args[0] : "auto");
        if (verdictFile != null) {
            // Written either way (empty: the device may be used), so no verdict of an earlier build survives.
            Files.createDirectories(verdictFile.toAbsolutePath().getParent());
            Files.writeString(verdictFile, refusal == null ? "" : refusal, StandardCharsets.UTF_8);
        }
        if (refusal == null) {
            if (Backends.cudaRequired()) {
                System.out.println("[mechspec] CUDA backend: " + DeviceProbe.device().describe());
            }
            return;
        }
        System.err.println(refusal);
        System.err.flush();
        if (verdictFile == null) {
            System.exit(1);
        }
    }

    /**
     * Null when the requested backend can run here (or needs no device), else the one line that stops the build:
     * {@code mechspec: -Dmechspec.backend=cuda was asked for, but <the probe's reason>}. Never throws: an unknown
     * backend, or anything the probe did not foresee, is a line too.
     */
    static String refusal(String requestedBackend) {
        try {
            System.setProperty("mechspec.backend", requestedBackend == null ? "auto" : requestedBackend);
            String requested = Backends.requested();
            if (!Backends.cudaRequired()) {
                return null;
            }
            String reason = Backends.cudaUnavailableReason();
            return reason == null ? null : oneLine("mechspec: -Dmechspec.backend=" + requested + " was asked for, but " + reason);
        } catch (IllegalArgumentException e) {
            return oneLine("mechspec: " + e.getMessage());
        } catch (RuntimeException | LinkageError e) {
            return oneLine("mechspec: -Dmechspec.backend=" + requestedBackend + " was asked for, but the CUDA probe failed: "
                    + DeviceProbe.firstLine(e));
        }
    }

    private static String oneLine(String s) {
        return s.replaceAll("\\s*\\R\\s*", " ").strip();
    }
}
