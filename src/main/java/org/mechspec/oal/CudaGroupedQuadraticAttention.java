package org.mechspec.oal;


import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.KernelArgs;

/**
 * Grouped-quadratic attention on the GPU ({@code src/main/cuda/oal.cu}), twin of {@link CpuGroupedQuadraticAttention}.
 * Outputs and denominators are poisoned before each launch; the denominators come back and are checked on the
 * host, so a kernel that skipped a row fails the guard or the differential contract.
 */
public final class CudaGroupedQuadraticAttention implements GroupedQuadraticAttentionOps {
    /** The most threads a dense block takes (a long row); a short row takes fewer ({@link #denseThreads}). */
    private static final int MAX_DENSE_THREADS = 128;
    /** oal.cu's OAL_MAX_SIDE: the length of [1, z] for the most groups a shape allows. */
    private static final int MAX_SIDE = QuadraticAttentionShape.MAX_GROUPS + 1;
    /** A warp's width: the recurrent kernel gets one thread per value column, rounded up to whole warps. */
    private static final int WARP = 32;
    private static final int MAX_SHARED_BYTES = 48 * 1024;
    private static CudaGroupedQuadraticAttention instance;

    private final CudaBackend cuda;

    private CudaGroupedQuadraticAttention(CudaBackend cuda) {
        this.cuda = cuda;
    }

    public static synchronized CudaGroupedQuadraticAttention get() {
        if (instance == null) {
            instance = new CudaGroupedQuadraticAttention(CudaBackend.get());
        }
        return instance;
    }

    @Override
    public String name() {
        return "cuda";
    }

    @Override
    public double[] dense(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        CpuGroupedQuadraticAttention.checkInputs(s, q, k, v, groups, m);
        return runF64("oal_dense_f64", s, q, k, v, groups, m, false);
    }

    @Override
    public float[] dense(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        CpuGroupedQuadraticAttention.checkInputs(s, q, k, v, groups, m);
        return runF32("oal_dense_f32", s, q, k, v, groups, m, false);
    }

    @Override
    public double[] recurrent(QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups, double[] m) {
        CpuGroupedQuadraticAttention.checkInputs(s, q, k, v, groups, m);
        return runF64("oal_recurrent_f64", s, q, k, v, groups, m, true);
    }

    @Override
    public float[] recurrent(QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups, float[] m) {
        CpuGroupedQuadraticAttention.checkInputs(s, q, k, v, groups, m);
        return runF32("oal_recurrent_f32", s, q, k, v, groups, m, true);
    }

    private double[] runF64(String kernel, QuadraticAttentionShape s, double[] q, double[] k, double[] v, int[] groups,
                            double[] m, boolean recurrent) {
        double[] out = new double[q.length];
        double[] den = new double[s.denominatorElements()];
        run(kernel, s, Pointer.to(q), Pointer.to(k), Pointer.to(v), groups, Pointer.to(m), m.length, Pointer.to(out),
                Pointer.to(den), args -> args.f64(1.0 / Math.sqrt(s.headDim())).f64(EPSILON), Sizeof.DOUBLE, recurrent);
        NonPositiveDenominatorException.requirePositive(s, den);
        return out;
    }

    private float[] runF32(String kernel, QuadraticAttentionShape s, float[] q, float[] k, float[] v, int[] groups,
                           float[] m, boolean recurrent) {
        float[] out = new float[q.length];
        float[] den = new float[s.denominatorElements()];
        run(kernel, s, Pointer.to(q), Pointer.to(k), Pointer.to(v), groups, Pointer.to(m), m.length, Pointer.to(out),
                Pointer.to(den), args -> args.f32((float) (1.0 / Math.sqrt(s.headDim()))).f32((float) EPSILON), Sizeof.FLOAT,
                recurrent);
        NonPositiveDenominatorException.requirePositive(s, den);
        return out;
    }

    /** Uploads the inputs, poisons out, den (and the recurrent state), launches, and copies out and den back. */
    private void run(String kernel, QuadraticAttentionShape s, Pointer q, Pointer k, Pointer v, int[] groups, Pointer m,
                     int mLength, Pointer outHost, Pointer denHost, java.util.function.UnaryOperator<KernelArgs> scalars, int e,
                     boolean recurrent) {
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
                launch(kernel, s, dq, dk, dv, dg, dm, dout, dden, dstate, scalars, e);
                cuda.download(outHost, dout, outBytes);
                cuda.download(denHost, dden, denBytes);
            }
        }
    }

    /**
     * Threads of a dense block: one per key of the row and per channel of the head, a power of two (the reduction's
     * tree) from a warp to {@value #MAX_DENSE_THREADS}. The count fixes the tree, so a shape's bits do not depend on
     * the device. Threads past both counts would only wait at every barrier of the reduction.
     */
    static int denseThreads(QuadraticAttentionShape s) {
        int threads = WARP;
        while (threads < MAX_DENSE_THREADS && threads < Math.max(s.seqLen(), s.headDim())) {
            threads *= 2;
        }
        return threads;
    }

    private static long stateElements(QuadraticAttentionShape s) {
        return (long) s.batch() * s.heads() * s.stateFeatures() * (s.headDim() + 1);
    }

    private void launch(String kernel, QuadraticAttentionShape s, CUdeviceptr q, CUdeviceptr k, CUdeviceptr v,
                        CUdeviceptr groups, CUdeviceptr m, CUdeviceptr out, CUdeviceptr den, CUdeviceptr state,
                        java.util.function.UnaryOperator<KernelArgs> scalars, int elementBytes) {
        KernelArgs args = new KernelArgs().ptr(q).ptr(k).ptr(v).ptr(groups).ptr(m).ptr(out).ptr(den);
        if (state != null) {
            args.ptr(state);
        }
        args.i32(s.seqLen()).i32(s.heads()).i32(s.kvHeads()).i32(s.headDim()).i32(s.groupCount());
        scalars.apply(args);
        if (state == null) {
            // The similarity row, the reduction scratch and the scaled query, then each group's members and starts.
            int threads = denseThreads(s);
            long shared = (long) (s.seqLen() + threads + s.headDim()) * elementBytes + (long) (s.headDim() + MAX_SIDE) * Sizeof.INT;
            if (shared > MAX_SHARED_BYTES) {
                throw new IllegalArgumentException("seqLen " + s.seqLen() + " and headDim " + s.headDim()
                        + " exceed the dense OAL kernel's shared-memory row buffer (" + MAX_SHARED_BYTES + " bytes)");
            }
            cuda.launch("oal", kernel, s.batch() * s.seqLen() * s.heads(), threads, (int) shared, args);
        } else {
            // One thread per column of [v, 1] (headDim + 1 of them): 64 threads left column 65 of a 64-dim head to a
            // second, one-thread pass. Each column's sums run in its own thread, so the count changes no result.
            int threads = Math.min(1024, (s.headDim() + 1 + WARP - 1) / WARP * WARP);
            cuda.launch("oal", kernel, s.batch() * s.heads(), threads, (4 * s.headDim() + 2) * elementBytes, args);
        }
    }
}
