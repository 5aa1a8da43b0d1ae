package org.mechspec.compute;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Asks, without ever crashing the JVM, whether the CUDA backend can run here. Without a driver JCuda throws
 * {@link UnsatisfiedLinkError} at class load; that and everything else becomes a one-line reason. The answer,
 * either way, is kept for the JVM's life: a device that failed once is not probed again.
 */
public final class DeviceProbe {
    private static String reason;
    private static CudaDevice device;
    private static boolean probed;

    private DeviceProbe() {
    }

    /** Null when a CUDA device is usable, else why not, in one line. */
    public static synchronized String unavailableReason() {
        if (!probed) {
            probe();
            probed = true;
        }
        return reason;
    }

    /** The usable device; throws with the reason when there is none. */
    public static synchronized CudaDevice device() {
        String r = unavailableReason();
        if (r != null) {
            throw new IllegalStateException("CUDA backend unavailable: " + r);
        }
        return device;
    }

    private static void probe() {
        String tmp = System.getProperty("java.io.tmpdir");
        try {
            Files.createDirectories(Path.of(tmp));
        } catch (IOException e) {
            reason = "java.io.tmpdir " + tmp + " is not writable (JCuda unpacks its natives there): " + e.getMessage();
            return;
        }
        try {
            device = CudaDriverProbe.probe();
        } catch (CudaDriverProbe.Unusable e) {
            reason = e.getMessage();
        } catch (LinkageError e) { // JCuda's natives need the NVIDIA driver's libcuda.so.1
            reason = "no CUDA driver: JCuda could not load its natives against libcuda.so.1 (" + firstLine(e) + ")";
        } catch (Throwable t) {
            reason = "CUDA driver present but unusable: " + firstLine(t);
        }
    }

    static String firstLine(Throwable t) {
        String m = t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
        int nl = m.indexOf('\n');
        return nl < 0 ? m : m.substring(0, nl);
    }
}
