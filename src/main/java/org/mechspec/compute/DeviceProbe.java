package org.mechspec.compute;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Asks, without ever crashing the JVM, whether the CUDA backend can run here. Without a driver JCuda throws
 * {@link UnsatisfiedLinkError} at class load; that and everything else becomes a one-line reason.
 */
public final class DeviceProbe {
    static final String KERNEL_DIR = "/org/mechspec/kernels/";
    private static String reason;
    private static boolean probed;

    private DeviceProbe() {
    }

    /** Null when a CUDA device is usable, else why not, in one line. */
    public static synchronized String unavailableReason() {
        if (!probed) {
            reason = probe();
            probed = true;
        }
        return reason;
    }

    private static String probe() {
        String tmp = System.getProperty("java.io.tmpdir");
        try {
            Files.createDirectories(Path.of(tmp));
        } catch (IOException e) {
            return "java.io.tmpdir " + tmp + " is not writable (JCuda unpacks its natives there): " + e.getMessage();
        }
        try {
            String driver = CudaDriverProbe.deviceCountOrReason();
            if (driver != null) {
                return driver;
            }
        } catch (LinkageError e) { // JCuda's natives need the NVIDIA driver's libcuda.so.1
            return "no CUDA driver: JCuda could not load its natives against libcuda.so.1 (" + firstLine(e) + ")";
        } catch (Throwable t) {
            return "CUDA driver present but unusable: " + firstLine(t);
        }
        if (DeviceProbe.class.getResource(KERNEL_DIR + "attention.ptx") == null) {
            return "CUDA kernels were not built into this jar (nvcc was not found at build time)";
        }
        return null;
    }

    static String firstLine(Throwable t) {
        String m = t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
