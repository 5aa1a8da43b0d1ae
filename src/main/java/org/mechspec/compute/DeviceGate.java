package org.mechspec.compute;

/**
 * Build step before the tests, in a JVM of its own: when a CUDA backend was asked for
 * ({@code -Dmechspec.backend=cuda|cuda-emulated}) and cannot run, stop the build with one line saying why instead
 * of a wall of failed GPU tests. The probe releases its context before this JVM exits, and nothing else here
 * creates one. arg: the requested backend.
 */
public final class DeviceGate {
    private DeviceGate() {
    }

    public static void main(String[] args) {
        System.setProperty("mechspec.backend", args.length > 0 ? args[0] : "auto");
        String requested = Backends.requested();
        if (!Backends.cudaRequired()) {
            return;
        }
        String reason = Backends.cudaUnavailableReason();
        if (reason != null) {
            System.err.println("mechspec: -Dmechspec.backend=" + requested + " was asked for, but " + reason);
            System.exit(1);
        }
        System.out.println("[mechspec] CUDA backend: " + DeviceProbe.device().describe());
    }
}
