package org.mechspec.pnmix;

import java.lang.management.ManagementFactory;
import java.util.function.ToLongFunction;
import org.mechspec.compute.Backend;
import org.mechspec.compute.CudaBackend;
import org.mechspec.worker.WorkerBackend;

/**
 * The memory one call of an implementation holds beyond what it held before, measured from outside the implementation:
 * for a worker, its processes' resident memory at its peak (the kernel's high-water mark, reset before the call); on
 * CUDA, the device memory allocated at once at the peak (every device allocation goes through {@code CudaBackend});
 * on the CPU, the bytes the JVM allocated on the calling thread (the CPU twin computes on it), which bounds its peak.
 *
 * @param what what is measured, for the check's message
 * @param during runs a call and returns the bytes it held at its peak beyond those held before
 */
record TransientMemory(String what, ToLongFunction<Runnable> during) {
    long during(Runnable call) {
        return during.applyAsLong(call);
    }

    static TransientMemory of(Backend backend) {
        if (backend instanceof WorkerBackend w) {
            return new TransientMemory("the worker's peak resident memory (VmHWM, reset through /proc/PID/clear_refs)",
                    call -> w.implementation().residentPeakBytes(call));
        }
        if (backend instanceof CudaBackend cuda) {
            return new TransientMemory("device memory allocated at once, beyond what was allocated before", call -> {
                long before = cuda.resetDevicePeak();
                call.run();
                return cuda.devicePeakBytes() - before;
            });
        }
        return jvmAllocations();
    }

    /** The bytes the JVM allocates on the calling thread during the call (an upper bound on what it holds at once). */
    static TransientMemory jvmAllocations() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return new TransientMemory("bytes the JVM allocated on the calling thread", call -> {
            long before = threads.getCurrentThreadAllocatedBytes();
            call.run();
            return threads.getCurrentThreadAllocatedBytes() - before;
        });
    }
}
