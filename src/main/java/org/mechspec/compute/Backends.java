package org.mechspec.compute;

import java.util.ArrayList;
import java.util.List;

/** Which backends a run uses, from {@code -Dmechspec.backend=auto|cpu|cuda} (default auto). */
public final class Backends {
    private Backends() {
    }

    public static String requested() {
        String r = System.getProperty("mechspec.backend", "auto").trim();
        if (r.isEmpty()) {
            return "auto";
        }
        if (!List.of("auto", "cpu", "cuda").contains(r)) {
            throw new IllegalArgumentException("-Dmechspec.backend must be auto, cpu or cuda, got '" + r + "'");
        }
        return r;
    }

    /** True when the run must use CUDA and so must fail, not skip, without a device. */
    public static boolean cudaRequired() {
        return requested().equals("cuda");
    }

    /**
     * The backends a seeded contract runs on. auto: cpu, plus cuda when a device answers; cpu: cpu; cuda: cuda
     * (throws with the probe's reason when there is none). {@code gpuOnly} contracts never run on cpu.
     */
    public static List<Backend> forContract(boolean gpuOnly) {
        String requested = requested();
        List<Backend> out = new ArrayList<>();
        if (!gpuOnly && !requested.equals("cuda")) {
            out.add(CpuBackend.INSTANCE);
        }
        if (requested.equals("cuda") || (requested.equals("auto") && DeviceProbe.unavailableReason() == null)) {
            out.add(CudaBackend.get());
        }
        return out;
    }
}
