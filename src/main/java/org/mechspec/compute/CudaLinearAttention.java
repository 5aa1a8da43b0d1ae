package org.mechspec.compute;

import static jcuda.driver.JCudaDriver.cuCtxSynchronize;
import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;

import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;

/**
 * Grouped-quadratic attention on the GPU ({@code src/main/cuda/oal.cu}), twin of {@link CpuLinearAttention}.
 * Outputs and denominators are poisoned before each launch; the denominators come back and are checked on the
 * host, so a kernel that skipped a row fails the guard or the differential contract.
 */
public final class CudaLinearAttention implements LinearAttentionOps {
    private static final int DENSE_THREADS = 128;
    private static final int RECURRENT_THREADS = 64;
    private static final int MAX_SHARED_BYTES = 48 * 1024;
    private static CudaLinearAttention instance;

    private final CudaBackend cuda;

    private CudaLinearAttention(CudaBackend cuda) {
        this.cuda = cuda;
    }

    public static synchronized CudaLinearAttention get() {
        if (instance == null) {
            instance = new CudaLinearAttention(CudaBackend.get());
        }
        return instance;
    }

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        CpuLinearAttention.checkInputs(s, q, k, v, groups, m);
        return runF64("oal_dense_f64", s, q, k, v, groups, m, false);
    }

    @Override
    public float[] dense(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        CpuLinearAttention.checkInputs(s, q, k, v, groups, m);
        return runF32("oal_dense_f32", s, q, k, v, groups, m, false);
    }

    @Override
    public double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        CpuLinearAttention.checkInputs(s, q, k, v, groups, m);
        return runF64("oal_recurrent_f64", s, q, k, v, groups, m, true);
    }

    @Override
    public float[] recurrent(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        CpuLinearAttention.checkInputs(s, q, k, v, groups, m);
        return runF32("oal_recurrent_f32", s, q, k, v, groups, m, true);
    }

    private double[] runF64(String kernel, QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups,
                            double[] m, boolean recurrent) {
        double[] out = new double[q.length];
        double[] den = new double[s.denominatorElements()];
        run(kernel, s, Pointer.to(q), Pointer.to(k), Pointer.to(v), groups, Pointer.to(m), m.length, Pointer.to(out),
                Pointer.to(den), Pointer.to(new double[] {1.0 / Math.sqrt(s.headDim())}), Pointer.to(new double[] {EPSILON}),
                Sizeof.DOUBLE, recurrent);
        NonPositiveDenominatorException.requirePositive(s, den);
        return out;
    }

    private float[] runF32(String kernel, QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups,
                           float[] m, boolean recurrent) {
        float[] out = new float[q.length];
        float[] den = new float[s.denominatorElements()];
        run(kernel, s, Pointer.to(q), Pointer.to(k), Pointer.to(v), groups, Pointer.to(m), m.length, Pointer.to(out),
                Pointer.to(den), Pointer.to(new float[] {(float) (1.0 / Math.sqrt(s.headDim()))}),
                Pointer.to(new float[] {(float) EPSILON}), Sizeof.FLOAT, recurrent);
        NonPositiveDenominatorException.requirePositive(s, den);
        return out;
    }

    /** Uploads the inputs, poisons out, den (and the recurrent state), launches, and copies out and den back. */
    private void run(String kernel, QuadraticAttentionShape s, Pointer q, Pointer k, Pointer v, int[] groups, Pointer m,
                     int mLength, Pointer outHost, Pointer denHost, Pointer invSqrtD, Pointer eps, int e, boolean recurrent) {
        long outBytes = (long) s.queryElements() * e;
        long denBytes = (long) s.denominatorElements() * e;
        synchronized (cuda) {
            try (CudaBackend.DeviceBuffers buf = cuda.new DeviceBuffers()) {
                CUdeviceptr dq = buf.upload(q, (long) s.queryElements() * e);
                CUdeviceptr dk = buf.upload(k, (long) s.keyElements() * e);
                CUdeviceptr dv = buf.upload(v, (long) s.keyElements() * e);
                CUdeviceptr dg = buf.upload(Pointer.to(groups), (long) groups.length * Sizeof.INT);
                CUdeviceptr dm = buf.upload(m, (long) mLength * e);
                CUdeviceptr dout = buf.poisoned(outBytes);
                CUdeviceptr dden = buf.poisoned(denBytes);
                CUdeviceptr dstate = recurrent ? buf.poisoned(stateElements(s) * e) : null;
                launch(kernel, s, dq, dk, dv, dg, dm, dout, dden, dstate, invSqrtD, eps, e);
                cuMemcpyDtoH(outHost, dout, outBytes);
                cuMemcpyDtoH(denHost, dden, denBytes);
            }
        }
    }

    private static long stateElements(QuadraticAttentionShape s) {
        return (long) s.batch() * s.heads() * s.stateFeatures() * (s.headDim() + 1);
    }

    private void launch(String kernel, QuadraticAttentionShape s, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v,
                        CUdeviceptr groups, CUdeviceptr m, CUdeviceptr out, CUdeviceptr den, CUdeviceptr state,
                        Pointer invSqrtD, Pointer eps, int elementBytes) {
        Pointer[] common = {Pointer.to(q), Pointer.to(k), Pointer.to(v), Pointer.to(groups), Pointer.to(m),
            Pointer.to(out), Pointer.to(den)};
        Pointer[] sizes = {Pointer.to(new int[] {s.seqLen()}), Pointer.to(new int[] {s.heads()}),
            Pointer.to(new int[] {s.kvHeads()}), Pointer.to(new int[] {s.headDim()}),
            Pointer.to(new int[] {s.groupCount()}), invSqrtD, eps};
        Pointer params;
        int blocks;
        int threads;
        int shared;
        if (state == null) {
            if ((long) (s.seqLen() + DENSE_THREADS + s.headDim()) * elementBytes > MAX_SHARED_BYTES) {
                throw new IllegalArgumentException("seqLen " + s.seqLen() + " and headDim " + s.headDim()
                        + " exceed the dense OAL kernel's shared-memory row buffer (" + MAX_SHARED_BYTES + " bytes)");
            }
            params = Pointer.to(concat(common, sizes));
            blocks = s.batch() * s.seqLen() * s.heads();
            threads = DENSE_THREADS;
            shared = (s.seqLen() + DENSE_THREADS + s.headDim()) * elementBytes;
        } else {
            params = Pointer.to(concat(concat(common, new Pointer[] {Pointer.to(state)}), sizes));
            blocks = s.batch() * s.heads();
            threads = RECURRENT_THREADS;
            shared = (4 * s.headDim() + 2) * elementBytes;
        }
        cuLaunchKernel(cuda.function("oal", kernel), blocks, 1, 1, threads, 1, 1, shared, null, params, null);
        cuCtxSynchronize();
    }

    private static Pointer[] concat(Pointer[] a, Pointer[] b) {
        Pointer[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
