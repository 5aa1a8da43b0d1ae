package org.mechspec.compute;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
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
 * NaN in the differential contracts. A kernel fault (an illegal address, a failed launch) is sticky: CUDA's
 * documentation says the process must end before CUDA can be used again, so there is no reset. The faulting call fails
 * naming its kernel, and every later call in this process fails at once naming that first fault (a run isolates papers
 * in processes of their own for this). Every launch and copy is counted ({@link #work()}).
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
    /** The first sticky fault, after which nothing more is asked of the device in this process; null while usable. */
    private String fault;
    private final Map<String, Long> launches = new TreeMap<>();
    private long bytesToDevice;
    /** Device bytes allocated through {@link DeviceBuffers} and not yet freed, and their most since the last reset. */
    private long liveDeviceBytes;
    private long peakDeviceBytes;
    private long bytesFromDevice;
    private double deviceMs;
    /** Events around each synchronous launch, for its device time; null where the driver would not make them. */
    private CUevent launchStart;
    private CUevent launchStop;

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

    /** The device this backend runs on: name, compute capability, whether the driver is the emulated one. */
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
            download(Pointer.to(out), dout, (long) out.length * Sizeof.DOUBLE);
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
            download(Pointer.to(out), dout, (long) out.length * Sizeof.FLOAT);
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
            download(Pointer.to(out), dout, (long) x.length * Sizeof.DOUBLE);
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
     * Launches {@code module/kernel} on a 1-D grid and waits for it; a fault comes back as an exception naming the
     * kernel (and ends this process's CUDA work, see the class comment). Its device time is counted in {@link #work()}.
     */
    public synchronized void launch(String module, String kernel, int blocks, int threads, int sharedBytes, KernelArgs args) {
        CUfunction f = function(module, kernel);
        String what = "CUDA kernel " + module + "/" + kernel + " (" + blocks + " blocks × " + threads + " threads, " + sharedBytes
                + " B shared, " + args.count() + " arguments)";
        try {
            boolean timed = launchEvents();
            if (timed) {
                cuEventRecord(launchStart, null);
            }
            cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, sharedBytes, null, null, args.extra());
            launches.merge(module + "/" + kernel, 1L, Long::sum);
            if (timed) {
                cuEventRecord(launchStop, null);
            }
            cuCtxSynchronize();
            if (timed) {
                float[] ms = new float[1];
                cuEventElapsedTime(ms, launchStart, launchStop);
                deviceMs += ms[0];
            } else {
                deviceMs = Double.NaN;
            }
        } catch (CudaException e) {
            throw failure(what, e);
        }
    }

    /** Makes the two launch events once; false (and no device time from here on) where the driver refuses them. */
    private boolean launchEvents() {
        if (launchStart == null) {
            CUevent start = new CUevent();
            CUevent stop = new CUevent();
            try {
                cuEventCreate(start, 0);
            } catch (CudaException e) {
                return false;
            }
            try {
                cuEventCreate(stop, 0);
            } catch (CudaException e) {
                cuEventDestroy(start); // the first event must not outlive a failed second
                return false;
            }
            launchStart = start;
            launchStop = stop;
        }
        return true;
    }

    /**
     * Launches {@code module/kernel} without waiting, for a timed batch ({@link #elapsedMs}); a fault shows at the
     * next synchronization, which {@link #elapsedMs} does.
     */
    public synchronized void enqueue(String module, String kernel, int blocks, int threads, int sharedBytes, KernelArgs args) {
        CUfunction f = function(module, kernel);
        try {
            cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, sharedBytes, null, null, args.extra());
            launches.merge(module + "/" + kernel, 1L, Long::sum);
        } catch (CudaException e) {
            throw failure("CUDA kernel " + module + "/" + kernel + " (enqueued)", e);
        }
    }

    /**
     * Device milliseconds of what {@code launches} enqueues, between two events on the default stream. Waits for
     * the work; a fault fails it as {@link #launch} does.
     */
    public synchronized double elapsedMs(Runnable launches) {
        requireUsable();
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
        try {
            cuEventRecord(start, null);
            launches.run();
            cuEventRecord(stop, null);
            cuEventSynchronize(stop);
            float[] ms = new float[1];
            cuEventElapsedTime(ms, start, stop);
            deviceMs += ms[0];
            return ms[0];
        } catch (CudaException e) {
            throw failure("timed CUDA launches", e);
        } finally {
            if (fault == null) { // after a sticky fault the driver answers nothing more, destroy included
                cuEventDestroy(start);
                cuEventDestroy(stop);
            }
        }
    }

    /**
     * Device bytes allocated now (through {@link DeviceBuffers}, which every device allocation of the project goes
     * through), and the mark {@link #devicePeakBytes()} measures from: it is set to them.
     */
    public synchronized long resetDevicePeak() {
        peakDeviceBytes = liveDeviceBytes;
        return liveDeviceBytes;
    }

    /** The most device bytes allocated at once since {@link #resetDevicePeak()} (or since the start). */
    public synchronized long devicePeakBytes() {
        return peakDeviceBytes;
    }

    /** Every launch and copy so far in this process (subtract two snapshots with {@link DeviceWork#since}). */
    public synchronized DeviceWork work() {
        return new DeviceWork(launches, bytesToDevice, bytesFromDevice, deviceMs);
    }

    /** Copies {@code bytes} from the device to {@code host}, counted in {@link #work()}. */
    public synchronized void download(Pointer host, CUdeviceptr device, long bytes) {
        requireUsable();
        try {
            cuMemcpyDtoH(host, device, bytes);
            bytesFromDevice += bytes;
        } catch (CudaException e) {
            throw failure("cuMemcpyDtoH of " + bytes + " bytes", e);
        }
    }

    /**
     * Enqueues a device-to-device copy of {@code bytes} on the default stream, not waited for: inside
     * {@link #elapsedMs}, the device's copy rate.
     */
    public synchronized void enqueueCopy(CUdeviceptr dst, CUdeviceptr src, long bytes) {
        requireUsable();
        try {
            cuMemcpyDtoDAsync(dst, src, bytes, null);
        } catch (CudaException e) {
            throw failure("cuMemcpyDtoDAsync of " + bytes + " bytes", e);
        }
    }

    /** Copies {@code bytes} from {@code host} to the device, counted in {@link #work()}. */
    public synchronized void upload(CUdeviceptr device, Pointer host, long bytes) {
        requireUsable();
        try {
            cuMemcpyHtoD(device, host, bytes);
            bytesToDevice += bytes;
        } catch (CudaException e) {
            throw failure("cuMemcpyHtoD of " + bytes + " bytes", e);
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
        requireUsable();
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
            if (sticky(e)) {
                throw failure("loading " + module + ".fatbin", e);
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

    /** True for the errors after which a context is unusable until the process ends (CUDA driver API documentation). */
    private static boolean sticky(CudaException e) {
        String message = String.valueOf(e.getMessage());
        return STICKY.stream().anyMatch(message::contains);
    }

    /**
     * The exception for a failed driver call {@code what}; a sticky error becomes this process's fault, which every
     * later call names ({@link #requireUsable}).
     */
    private IllegalStateException failure(String what, CudaException e) {
        if (!sticky(e)) {
            return new IllegalStateException(what + " failed: " + e.getMessage(), e);
        }
        if (fault == null) {
            fault = what + " failed: " + e.getMessage();
        }
        return new IllegalStateException(what + " failed: " + e.getMessage() + "; a sticky error, so CUDA is unusable in this"
                + " process from here on (CUDA's documentation: the process must end)", e);
    }

    /** Fails at once, naming the first fault, when an earlier call left this process's CUDA unusable. */
    private void requireUsable() {
        if (fault != null) {
            throw new IllegalStateException("CUDA is unusable in this process since " + fault + " (sticky; a new process is"
                    + " needed); nothing was sent to the device");
        }
    }

    /** Why CUDA is unusable in this process (its first sticky fault), or null while it is usable. */
    public synchronized String fault() {
        return fault;
    }

    /**
     * Device allocations freed together; outputs start poisoned. Closing frees every allocation even when one free
     * fails, then reports the failures; after a sticky fault nothing is freed (the driver answers nothing more, and the
     * memory goes with the process).
     */
    public final class DeviceBuffers implements AutoCloseable {
        private final List<CUdeviceptr> owned = new ArrayList<>();
        private long ownedBytes;

        /** An empty set of buffers. */
        public DeviceBuffers() {
            synchronized (CudaBackend.this) {
                requireUsable();
                cuCtxSetCurrent(context);
            }
        }

        /** False once a sticky fault made this process's CUDA unusable: these pointers must not be used again. */
        public boolean live() {
            synchronized (CudaBackend.this) {
                return fault == null;
            }
        }

        /** Copies into one of these buffers (or part of one), counted in {@link #work()}. */
        public void copyIn(CUdeviceptr device, Pointer host, long bytes) {
            CudaBackend.this.upload(device, host, bytes);
        }

        /** Copies out of one of these buffers (or part of one), counted in {@link #work()}. */
        public void download(Pointer host, CUdeviceptr device, long bytes) {
            CudaBackend.this.download(host, device, bytes);
        }

        /** A device copy of {@code bytes} bytes at {@code host}, counted as bytes to the device. */
        public CUdeviceptr upload(Pointer host, long bytes) {
            CUdeviceptr p = alloc(bytes);
            CudaBackend.this.upload(p, host, bytes);
            return p;
        }

        /** A device buffer of {@code bytes} bytes filled with NaN bits, so an element a kernel leaves unwritten shows. */
        public CUdeviceptr poisoned(long bytes) {
            CUdeviceptr p = alloc(bytes);
            synchronized (CudaBackend.this) {
                try {
                    cuMemsetD8(p, (byte) 0xFF, bytes);
                } catch (CudaException e) {
                    throw failure("cuMemsetD8 of " + bytes + " bytes", e);
                }
            }
            return p;
        }

        private CUdeviceptr alloc(long bytes) {
            synchronized (CudaBackend.this) {
                requireUsable();
                CUdeviceptr p = DeviceMemory.allocation();
                try {
                    cuMemAlloc(p, Math.max(bytes, 1));
                } catch (CudaException e) {
                    throw failure("cuMemAlloc of " + bytes + " bytes", e);
                }
                owned.add(p);
                ownedBytes += Math.max(bytes, 1);
                liveDeviceBytes += Math.max(bytes, 1);
                peakDeviceBytes = Math.max(peakDeviceBytes, liveDeviceBytes);
                return p;
            }
        }

        @Override
        public void close() {
            synchronized (CudaBackend.this) {
                liveDeviceBytes -= ownedBytes;
                ownedBytes = 0;
                if (fault != null) {
                    owned.clear();
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
                    failure("cuMemFree", first); // a sticky error here still ends this process's CUDA work
                    throw new IllegalStateException("cuMemFree failed for " + failures.size() + " device buffer(s): " + failures, first);
                }
            }
        }
    }
}
