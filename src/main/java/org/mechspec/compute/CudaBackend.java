package org.mechspec.compute;

import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetName;
import static jcuda.driver.JCudaDriver.cuDevicePrimaryCtxRetain;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;

/**
 * The CUDA backend: JCuda's driver API over PTX compiled from {@code src/main/cuda} at build time.
 * Every output buffer is poisoned (all bytes 0xFF, a NaN pattern) before a launch, so an element a kernel
 * forgot to write shows up as NaN in the differential contracts.
 */
public final class CudaBackend implements Backend {
    private static final int THREADS = 128;
    private static final int MAX_SHARED_BYTES = 48 * 1024;
    private static CudaBackend instance;

    private final CUcontext context = new CUcontext();
    private final String deviceName;
    private final Map<String, CUmodule> modules = new HashMap<>();

    private CudaBackend() {
        CUdevice device = new CUdevice();
        cuDeviceGet(device, 0);
        cuDevicePrimaryCtxRetain(context, device);
        cuCtxSetCurrent(context);
        byte[] name = new byte[256];
        cuDeviceGetName(name, name.length, device);
        String n = new String(name, StandardCharsets.US_ASCII);
        deviceName = n.substring(0, n.indexOf('\0') < 0 ? n.length() : n.indexOf('\0')).trim();
    }

    /** The backend on device 0; throws with the probe's one-line reason when there is no usable device. */
    public static synchronized CudaBackend get() {
        String reason = DeviceProbe.unavailableReason();
        if (reason != null) {
            throw new IllegalStateException("CUDA backend unavailable: " + reason);
        }
        if (instance == null) {
            instance = new CudaBackend();
        }
        return instance;
    }

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public String device() {
        return deviceName;
    }

    @Override
    public synchronized double[] attention(AttentionShape s, double[] q, double[] k, double[] v, double[] bias) {
        checkAttention(s, q.length, k.length, v.length, bias == null ? 0 : bias.length, bias != null, Sizeof.DOUBLE);
        Finite.require("q", q);
        Finite.require("k", k);
        Finite.require("v", v);
        if (bias != null) {
            Finite.require("bias", bias);
        }
        double[] out = new double[(int) s.outputElements()];
        try (DeviceBuffers buf = new DeviceBuffers()) {
            CUdeviceptr dq = buf.upload(Pointer.to(q), (long) q.length * Sizeof.DOUBLE);
            CUdeviceptr dk = buf.upload(Pointer.to(k), (long) k.length * Sizeof.DOUBLE);
            CUdeviceptr dv = buf.upload(Pointer.to(v), (long) v.length * Sizeof.DOUBLE);
            CUdeviceptr db = bias == null ? new CUdeviceptr() : buf.upload(Pointer.to(bias), (long) bias.length * Sizeof.DOUBLE);
            CUdeviceptr dout = buf.poisoned((long) out.length * Sizeof.DOUBLE);
            launchAttention("attention_f64", s, dq, dk, dv, db, dout, Pointer.to(new double[] {s.scale()}), Sizeof.DOUBLE);
            cuMemcpyDtoH(Pointer.to(out), dout, (long) out.length * Sizeof.DOUBLE);
        }
        return out;
    }

    @Override
    public synchronized float[] attention(AttentionShape s, float[] q, float[] k, float[] v, float[] bias) {
        checkAttention(s, q.length, k.length, v.length, bias == null ? 0 : bias.length, bias != null, Sizeof.FLOAT);
        Finite.require("q", q);
        Finite.require("k", k);
        Finite.require("v", v);
        if (bias != null) {
            Finite.require("bias", bias);
        }
        float[] out = new float[(int) s.outputElements()];
        try (DeviceBuffers buf = new DeviceBuffers()) {
            CUdeviceptr dq = buf.upload(Pointer.to(q), (long) q.length * Sizeof.FLOAT);
            CUdeviceptr dk = buf.upload(Pointer.to(k), (long) k.length * Sizeof.FLOAT);
            CUdeviceptr dv = buf.upload(Pointer.to(v), (long) v.length * Sizeof.FLOAT);
            CUdeviceptr db = bias == null ? new CUdeviceptr() : buf.upload(Pointer.to(bias), (long) bias.length * Sizeof.FLOAT);
            CUdeviceptr dout = buf.poisoned((long) out.length * Sizeof.FLOAT);
            launchAttention("attention_f32", s, dq, dk, dv, db, dout, Pointer.to(new float[] {(float) s.scale()}), Sizeof.FLOAT);
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
            Pointer params = Pointer.to(Pointer.to(dx), Pointer.to(dout), Pointer.to(new int[] {x.length}));
            cuLaunchKernel(function(module, name), (x.length + 255) / 256, 1, 1, 256, 1, 1, 0, null, params, null);
            cuCtxSynchronize();
            cuMemcpyDtoH(Pointer.to(out), dout, (long) x.length * Sizeof.DOUBLE);
        }
        return out;
    }

    private void checkAttention(AttentionShape s, int q, int k, int v, int bias, boolean hasBias, int elementBytes) {
        s.validate(q, k, v, bias, hasBias);
        long shared = (long) (s.keyLen() + THREADS) * elementBytes;
        if (shared > MAX_SHARED_BYTES) {
            throw new IllegalArgumentException("keyLen " + s.keyLen() + " exceeds the CUDA attention kernel's shared-memory"
                    + " score buffer (at most " + (MAX_SHARED_BYTES / elementBytes - THREADS) + " keys at this precision)");
        }
    }

    private void launchAttention(String kernel, AttentionShape s, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v,
                                 CUdeviceptr bias, CUdeviceptr out, Pointer scale, int elementBytes) {
        Pointer params = Pointer.to(Pointer.to(q), Pointer.to(k), Pointer.to(v), Pointer.to(bias), Pointer.to(out),
                Pointer.to(new int[] {s.queryHeads()}), Pointer.to(new int[] {s.kvHeads()}),
                Pointer.to(new int[] {s.queryLen()}), Pointer.to(new int[] {s.keyLen()}),
                Pointer.to(new int[] {s.headDim()}), Pointer.to(new int[] {s.valueDim()}), scale,
                Pointer.to(new int[] {s.causal() ? 1 : 0}));
        int rows = s.batch() * s.queryHeads() * s.queryLen();
        int shared = (s.keyLen() + THREADS) * elementBytes;
        cuLaunchKernel(function("attention", kernel), rows, 1, 1, THREADS, 1, 1, shared, null, params, null);
        cuCtxSynchronize();
    }

    /** A kernel from {@code /org/mechspec/kernels/<module>.ptx}, module loaded once. */
    public synchronized CUfunction function(String module, String name) {
        cuCtxSetCurrent(context);
        CUmodule m = modules.computeIfAbsent(module, CudaBackend::loadModule);
        CUfunction f = new CUfunction();
        cuModuleGetFunction(f, m, name);
        return f;
    }

    private static CUmodule loadModule(String module) {
        String path = DeviceProbe.KERNEL_DIR + module + ".ptx";
        try (InputStream in = CudaBackend.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("PTX " + path + " is missing: build with nvcc present");
            }
            byte[] ptx = in.readAllBytes();
            byte[] terminated = java.util.Arrays.copyOf(ptx, ptx.length + 1);
            CUmodule m = new CUmodule();
            cuModuleLoadData(m, terminated);
            return m;
        } catch (IOException e) {
            throw new IllegalStateException("cannot read PTX " + path + ": " + e.getMessage(), e);
        }
    }

    /** Device allocations freed together; outputs start poisoned. */
    public final class DeviceBuffers implements AutoCloseable {
        private final java.util.List<CUdeviceptr> owned = new java.util.ArrayList<>();

        public DeviceBuffers() {
            cuCtxSetCurrent(context);
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
            CUdeviceptr p = new CUdeviceptr();
            cuMemAlloc(p, Math.max(bytes, 1));
            owned.add(p);
            return p;
        }

        @Override
        public void close() {
            for (CUdeviceptr p : owned) {
                cuMemFree(p);
            }
        }
    }
}
