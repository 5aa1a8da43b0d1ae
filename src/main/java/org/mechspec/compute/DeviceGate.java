package org.mechspec.compute;

/**
 * Build step before the tests: when {@code -Dmechspec.backend=cuda} was asked for and no CUDA device is usable,
 * stop the build with one line saying why, instead of a wall of failed GPU tests. arg: the requested backend.
 */
public final class DeviceGate {
    private DeviceGate() {
    }

    public static void main(String[] args) {
        System.setProperty("mechspec.backend", args.length > 0 ? args[0] : "auto");
        String requested = Backends.requested();
        if (!requested.equals("cuda")) {
            return;
        }
        String reason = DeviceProbe.unavailableReason();
        if (reason != null) {
            throw new IllegalStateException("mechspec: -Dmechspec.backend=cuda was asked for, but " + reason);
        }
        System.out.println("[mechspec] CUDA backend on " + CudaBackend.get().device());
    }
}
