package org.mechspec.compute;

import java.util.ArrayList;
import java.util.List;

/**
 * Which backends a run uses, from {@code -Dmechspec.backend=auto|cpu|cuda|cuda-emulated} (default auto).
 * cuda-emulated is cuda on the project's emulated driver (the build puts it on the library path); the device
 * must then be the emulator, so a run can never pass one off as the other.
 */
public final class Backends {
    /** The values {@code -Dmechspec.backend} and {@code mechspec run --backend} accept. */
    public static final List<String> NAMES = List.of("auto", "cpu", "cuda", "cuda-emulated");

    private Backends() {
    }

    /** The backend asked for by {@code -Dmechspec.backend} (auto when unset). */
    public static String requested() {
        String r = System.getProperty("mechspec.backend", "auto").trim();
        if (r.isEmpty()) {
            return "auto";
        }
        if (!NAMES.contains(r)) {
            throw new IllegalArgumentException("-Dmechspec.backend must be one of " + String.join(", ", NAMES) + ", got '" + r + "'");
        }
        return r;
    }

    /** True when the run must use CUDA and so must fail, not skip, without a device. */
    public static boolean cudaRequired() {
        return requested().startsWith("cuda");
    }

    /**
     * Null when the requested CUDA backend can run here, else why not in one line: the probe's reason, or a
     * mismatch between cuda-emulated and the device that answered.
     */
    public static String cudaUnavailableReason() {
        return cudaUnavailableReason(requested());
    }

    /** As {@link #cudaUnavailableReason()}, for the given requested backend. */
    public static String cudaUnavailableReason(String requested) {
        String reason = DeviceProbe.unavailableReason();
        if (reason != null) {
            return reason;
        }
        boolean emulated = DeviceProbe.device().emulated();
        if (requested.equals("cuda-emulated") && !emulated) {
            return "cuda-emulated was asked for, but the driver on the library path is a real one ("
                    + DeviceProbe.device().name() + "); build the emulator (g++) and run through Maven";
        }
        return null;
    }

    /**
     * The backends a seeded contract runs on; never empty. auto: cpu, plus cuda when a device answers; cpu: cpu;
     * cuda and cuda-emulated: cuda (throws with the reason when it cannot run). A GPU-only contract never runs
     * on cpu: where no CUDA backend is in the run it gets an {@link UnavailableBackend}, so it is listed and
     * skipped with the reason instead of failing for want of arguments.
     */
    public static List<Backend> forContract(boolean gpuOnly) {
        String requested = requested();
        List<Backend> out = new ArrayList<>();
        if (!gpuOnly && !cudaRequired()) {
            out.add(CpuBackend.INSTANCE);
        }
        if (cudaRequired()) {
            String reason = cudaUnavailableReason();
            if (reason != null) {
                throw new IllegalStateException("CUDA backend unavailable: " + reason);
            }
            out.add(CudaBackend.get());
        } else if (requested.equals("auto") && DeviceProbe.unavailableReason() == null) {
            out.add(CudaBackend.get());
        } else if (gpuOnly) {
            out.add(new UnavailableBackend(requested.equals("cpu")
                    ? "not run: -Dmechspec.backend=cpu runs the CPU backend only"
                    : "needs a CUDA device: " + DeviceProbe.unavailableReason()));
        }
        return out;
    }
}
