package org.mechspec.compute;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxReset;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jcuda.CudaException;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUevent;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import org.mechspec.data.DataFiles;

/**
 * The CUDA backend: JCuda's driver API over the fatbins nvcc built from {@code src/main/cuda}. Every output buffer
 * is poisoned (all bytes 0xFF, a NaN pattern) before a launch, so an element a kernel forgot to write shows up as
 * NaN in the differential contracts. A kernel fault (an illegal address, a failed launch) poisons a CUDA context
 * for good; the backend then resets the primary context, so the failure stays with the call that caused it.
 */
public final class CudaBackend implements Backend {
    private static final int THREADS = 128;
    private static final int MAX_SHARED_BYTES = 48 * 1024;
    /** Errors after which the context is unusable until it is destroyed (CUDA driver API documentation). */
    private static final List<String> STICKY = List.of("CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_FAILED",
            "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_MISALIGNED_ADDRESS", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
            "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_HARDWARE_STACK_ERROR", "CUDA_ERROR_ASSERT", "CUDA_ERROR_LAUNCH_TIMEOUT",
            "CUDA_ERROR_ECC_UNCORRECTABLE", "CUDA_ERROR_CONTEXT_IS_DESTROYED");
    private static CudaBackend instance;

    private final CudaDevice info;
    private final CUdevice device = new CUdevice();
    private final CUcontext context = new CUcontext();
    private final Map<String, CUmodule> modules = new HashMap<>();
    private final Map<String, String> failedModules = new HashMap<>();
    private final Map<String, Map<String, String>> loadedImages = new TreeMap<>();
    /** Increases with every context reset; buffers of an older generation went with the old context. */
    private int generation;

    private CudaBackend(CudaDevice info) {
        this.info = info;
        cuDeviceGet(device, 0);
        cuDevicePrimaryCtxRetain(context, device);
        cuCtxSetCurrent(context);
    }

    /** The backend on device 0; throws with the probe's one-line reason when there is no usable device. */
    public static synchronized CudaBackend get() {
        if (instance == null) {
            instance = new CudaBackend(DeviceProbe.device());
        }
        return instance;
    }

    /** "cuda", or "cuda-emulated" on the project's emulated driver, whose runs are never GPU evidence. */
    @Override
    public String name() {
        return info.emulated() ? "cuda-emulated" : "cuda";
    }

    @Override
    public String device() {
        return info.name();
    }

    public CudaDevice info() {
        return info;
    }

    /**
     * Driver, compute capability, nvcc and, per loaded module of the jar's kernels, the image's SHA-256 and which
     * image the driver runs.
     */
    @Override
    public synchronized Map<String, Object> provenance() {
        Map<String, Object> p = new TreeMap<>();
        p.put("driver_cuda_version", info.driverRelease());
        p.put("compute_capability", info.computeCapability());
        p.put("nvcc", KernelImages.nvcc());
        p.put("emulated", info.emulated());
        Map<String, Map<String, String>> images = new TreeMap<>();
        java.util.Set<String> main = KernelImages.mainModules();
        loadedImages.forEach((k, v) -> {
            if (main.contains(k)) {
                images.put(k, new TreeMap<>(v));
            }
        });
        p.put("images", images);
        return p;
    }

    @Override
    public synchronized double[] attention(AttentionShape s, double[] q, double[] k, double[] v, double[] bias) {
        s.requireInputs(q, k, v, bias);
        requireSharedOutputRow(s, Sizeof.DOUBLE);
        double[] out = new double[(int) s.outputElements()];
        try (DeviceBuffers buf = new DeviceBuffers()) {
            CUdeviceptr dq = buf.upload(Pointer.to(q), (long) q.length * Sizeof.DOUBLE);
            CUdeviceptr dk = buf.upload(Pointer.to(k), (long) k.length * Sizeof.DOUBLE);
            CUdeviceptr dv = buf.upload(Pointer.to(v), (long) v.length * Sizeof.DOUBLE);
            CUdeviceptr db = bias == null ? null : buf.upload(Pointer.to(bias), (long) bias.length * Sizeof.DOUBLE);
            CUdeviceptr dout = buf.poisoned((long) out.length * Sizeof.DOUBLE);
            launchAttention("attention_f64", s, attentionArgs(s, dq, dk, dv, db, dout).f64(s.scale()).i32(s.causal() ? 1 : 0),
                    Sizeof.DOUBLE);
            cuMemcpyDtoH(Pointer.to(out), dout, (long) out.length * Sizeof.DOUBLE);
        }
        return out;
    }

    @Override
    public synchronized float[] attention(AttentionShape s, float[] q, float[] k, float[] v, float[] bias) {
        s.requireInputs(q, k, v, bias);
        requireSharedOutputRow(s, Sizeof.FLOAT);
        float[] out = new float[(int) s.outputElements()];
        try (DeviceBuffers buf = new DeviceBuffers()) {
            CUdeviceptr dq = buf.upload(Pointer.to(q), (long) q.length * Sizeof.FLOAT);
            CUdeviceptr dk = buf.upload(Pointer.to(k), (long) k.length * Sizeof.FLOAT);
            CUdeviceptr dv = buf.upload(Pointer.to(v), (long) v.length * Sizeof.FLOAT);
            CUdeviceptr db = bias == null ? null : buf.upload(Pointer.to(bias), (long) bias.length * Sizeof.FLOAT);
            CUdeviceptr dout = buf.poisoned((long) out.length * Sizeof.FLOAT);
            launchAttention("attention_f32", s,
                    attentionArgs(s, dq, dk, dv, db, dout).f32((float) s.scale()).i32(s.causal() ? 1 : 0), Sizeof.FLOAT);
            cuMemcpyDtoH(Pointer.to(out), dout, (long) out.length * Sizeof.FLOAT);
        }
        return out;
    }

    @Override
    public synchronized double[] roundToHalf(double[] x) {
        return elementwise("rounding", "round_half_f64", x);
    }

    @Override
    public synchronized double[] roundToBfloat16(double[] x) {
        return elementwise("rounding", "round_bf16_f64", x);
    }

    /** Runs an elementwise f64 → f64 kernel {@code name(const double* x, double* out, int n)}. */
    synchronized double[] elementwise(String module, String name, double[] x) {
        double[] out = new double[x.length];
        if (x.length == 0) {
            return out;
        }
        try (DeviceBuffers buf = new DeviceBuffers()) {
            CUdeviceptr dx = buf.upload(Pointer.to(x), (long) x.length * Sizeof.DOUBLE);
            CUdeviceptr dout = buf.poisoned((long) x.length * Sizeof.DOUBLE);
            launch(module, name, (x.length + 255) / 256, 256, 0, new KernelArgs().ptr(dx).ptr(dout).i32(x.length));
            cuMemcpyDtoH(Pointer.to(out), dout, (long) x.length * Sizeof.DOUBLE);
        }
        return out;
    }

    /** The kernel keeps one output row in shared memory: the value width it can take. */
    private static void requireSharedOutputRow(AttentionShape s, int elementBytes) {
        if (attentionSharedBytes(s, elementBytes) > MAX_SHARED_BYTES) {
            throw new IllegalArgumentException("valueDim " + s.valueDim() + " exceeds the CUDA attention kernel's shared-memory"
                    + " output buffer (at most " + (MAX_SHARED_BYTES / elementBytes - 2 * THREADS) + " at this precision)");
        }
    }

    /** A tile of weights, the reduction tree and one output row: nothing grows with the key length. */
    private static long attentionSharedBytes(AttentionShape s, int elementBytes) {
        return (2L * THREADS + s.valueDim()) * elementBytes;
    }

    private static KernelArgs attentionArgs(AttentionShape s, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v, CUdeviceptr bias,
                                            CUdeviceptr out) {
        return new KernelArgs().ptr(q).ptr(k).ptr(v).ptr(bias).ptr(out).i32(s.queryHeads()).i32(s.kvHeads())
                .i32(s.queryLen()).i32(s.keyLen()).i32(s.headDim()).i32(s.valueDim());
    }

    private void launchAttention(String kernel, AttentionShape s, KernelArgs args, int elementBytes) {
        int rows = s.batch() * s.queryHeads() * s.queryLen();
        launch("attention", kernel, rows, THREADS, (int) attentionSharedBytes(s, elementBytes), args);
    }

    /**
     * Launches {@code module/kernel} on a 1-D grid and waits for it. A fault resets the context (see the class
     * comment) and comes back as an exception naming the kernel.
     */
    public synchronized void launch(String module, String kernel, int blocks, int threads, int sharedBytes, KernelArgs args) {
        CUfunction f = function(module, kernel);
        try {
            cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, sharedBytes, null, null, args.extra());
            cuCtxSynchronize();
        } catch (CudaException e) {
            boolean reset = resetIfSticky(e);
            throw new IllegalStateException("CUDA kernel " + module + "/" + kernel + " (" + blocks + " blocks × " + threads
                    + " threads, " + sharedBytes + " B shared, " + args.count() + " arguments) failed: " + e.getMessage()
                    + (reset ? "; the CUDA context was reset" : ""), e);
        }
    }

    /**
     * Launches {@code module/kernel} without waiting, for a timed batch ({@link #elapsedMs}); a fault shows at the
     * next synchronization, which {@link #elapsedMs} does.
     */
    public synchronized void enqueue(String module, String kernel, int blocks, int threads, int sharedBytes, KernelArgs args) {
        cuLaunchKernel(function(module, kernel), blocks, 1, 1, threads, 1, 1, sharedBytes, null, null, args.extra());
    }

    /**
     * Device milliseconds of what {@code launches} enqueues, between two events on the default stream. Waits for
     * the work; a fault resets the context as {@link #launch} does.
     */
    public synchronized double elapsedMs(Runnable launches) {
        cuCtxSetCurrent(context);
        CUevent start = new CUevent();
        CUevent stop = new CUevent();
        cuEventCreate(start, 0);
        try {
            cuEventCreate(stop, 0);
        } catch (CudaException e) {
            cuEventDestroy(start); // the first event must not outlive a failed second
            throw e;
        }
        int born = generation;
        try {
            cuEventRecord(start, null);
            launches.run();
            cuEventRecord(stop, null);
            cuEventSynchronize(stop);
            float[] ms = new float[1];
            cuEventElapsedTime(ms, start, stop);
            return ms[0];
        } catch (CudaException e) {
            boolean reset = resetIfSticky(e);
            throw new IllegalStateException("timed CUDA launches failed: " + e.getMessage()
                    + (reset ? "; the CUDA context was reset" : ""), e);
        } finally {
            if (born == generation) {   // a reset took the events with the old context
                cuEventDestroy(start);
                cuEventDestroy(stop);
            }
        }
    }

    /** A device attribute ({@code CUdevice_attribute}), or −1 when the driver does not report it. */
    public synchronized int attribute(int attribute) {
        int[] v = {-1};
        try {
            cuDeviceGetAttribute(v, attribute, device);
        } catch (CudaException e) {
            return -1;
        }
        return v[0];
    }

    /**
     * Peak DRAM bandwidth in bytes/s from the device's attributes: memory clock (kHz) × bus width (bits) / 8 × 2 for
     * double data rate, as NVIDIA's bandwidth samples compute it; NaN when the driver reports either as unknown.
     */
    public double peakMemoryBandwidth() {
        int clockKhz = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
        int busBits = attribute(CUdevice_attribute.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
        return clockKhz > 0 && busBits > 0 ? 2.0 * clockKhz * 1000.0 * busBits / 8.0 : Double.NaN;
    }

    /** A kernel of {@code <module>.fatbin} (main kernels, or test kernels on the test classpath). */
    public synchronized CUfunction function(String module, String name) {
        cuCtxSetCurrent(context);
        CUmodule m = module(module);
        CUfunction f = new CUfunction();
        try {
            cuModuleGetFunction(f, m, name);
        } catch (CudaException e) {
            throw new IllegalStateException("CUDA kernel " + module + "/" + name + " not found in " + module + ".fatbin: " + e.getMessage(), e);
        }
        return f;
    }

    /** A module, loaded once; a failed load is remembered and not retried. */
    private CUmodule module(String module) {
        String failed = failedModules.get(module);
        if (failed != null) {
            throw new IllegalStateException(failed);
        }
        CUmodule m = modules.get(module);
        if (m != null) {
            return m;
        }
        byte[] image = KernelImages.read(module);
        m = new CUmodule();
        try {
            cuModuleLoadData(m, image);
        } catch (CudaException e) {
            if (resetIfSticky(e)) {
                throw new IllegalStateException("CUDA context was broken when loading " + module + ": " + e.getMessage(), e);
            }
            String why = CudaDriverProbe.loadFailure(module, e.getMessage(), info.driverVersion());
            failedModules.put(module, why);
            throw new IllegalStateException(why, e);
        }
        modules.put(module, m);
        Map<String, String> record = new TreeMap<>();
        record.put("sha256", DataFiles.sha256(image));
        FatBinary.Image chosen = FatBinary.isFatBinary(image) ? FatBinary.parse(image).imageFor(info.ccMajor(), info.ccMinor()) : null;
        record.put("image", chosen == null ? "none" : chosen.describe());
        loadedImages.put(module, record);
        return m;
    }

    /** After a sticky error: reset the primary context (freeing its memory and modules) and make it current again. */
    private boolean resetIfSticky(CudaException e) {
        String message = String.valueOf(e.getMessage());
        if (STICKY.stream().noneMatch(message::contains)) {
            return false;
        }
        modules.clear();
        generation++;
        cuDevicePrimaryCtxReset(device);
        cuCtxSetCurrent(context);
        return true;
    }

    /**
     * Device allocations freed together; outputs start poisoned. Closing frees every allocation even when one free
     * fails, then reports the failures; after a context reset there is nothing left to free.
     */
    public final class DeviceBuffers implements AutoCloseable {
        private final List<CUdeviceptr> owned = new ArrayList<>();
        private final int born;

        public DeviceBuffers() {
            synchronized (CudaBackend.this) {
                cuCtxSetCurrent(context);
                born = generation;
            }
        }

        /** False once a context reset has freed these buffers with the old context: their pointers must not be used. */
        public boolean live() {
            synchronized (CudaBackend.this) {
                return born == generation;
            }
        }

        public CUdeviceptr upload(Pointer host, long bytes) {
            CUdeviceptr p = alloc(bytes);
            cuMemcpyHtoD(p, host, bytes);
            return p;
        }

        public CUdeviceptr poisoned(long bytes) {
            CUdeviceptr p = alloc(bytes);
            cuMemsetD8(p, (byte) 0xFF, bytes);
            return p;
        }

        private CUdeviceptr alloc(long bytes) {
            CUdeviceptr p = DeviceMemory.allocation();
            cuMemAlloc(p, Math.max(bytes, 1));
            owned.add(p);
            return p;
        }

        @Override
        public void close() {
            synchronized (CudaBackend.this) {
                if (born != generation) {
                    return;
                }
                List<String> failures = new ArrayList<>();
                CudaException first = null;
                for (CUdeviceptr p : owned) {
                    try {
                        cuMemFree(p);
                    } catch (CudaException e) {
                        failures.add(e.getMessage());
                        first = first == null ? e : first;
                    }
                }
                owned.clear();
                if (first != null) {
                    boolean reset = resetIfSticky(first);
                    throw new IllegalStateException("cuMemFree failed for " + failures.size() + " device buffer(s): " + failures
                            + (reset ? "; the CUDA context was reset" : ""), first);
                }
            }
        }
    }
}
