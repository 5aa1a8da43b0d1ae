package org.mechspec.foldbias;


import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import org.mechspec.compute.CudaBackend;
import org.mechspec.compute.KernelArgs;

/** The rank-one fold on the GPU: {@code fold_rank_one_f64} from {@code src/main/cuda/foldbias.cu}. */
final class CudaRankOneFold implements RankOneFold {
    private static final int THREADS = 256;

    @Override
    public double[] fold(double[] compactKeys, double[] beta, double[] u, int t, int d) {
        RankOneFold.validate(compactKeys, beta, u, t, d);
        CudaBackend cuda = CudaBackend.get();
        int count = t * d;
        double[] out = new double[count];
        synchronized (cuda) {
            try (CudaBackend.DeviceBuffers buf = cuda.new DeviceBuffers()) {
                CUdeviceptr dk = buf.upload(Pointer.to(compactKeys), (long) count * Sizeof.DOUBLE);
                CUdeviceptr db = buf.upload(Pointer.to(beta), (long) t * Sizeof.DOUBLE);
                CUdeviceptr du = buf.upload(Pointer.to(u), (long) d * Sizeof.DOUBLE);
                CUdeviceptr dout = buf.poisoned((long) count * Sizeof.DOUBLE);
                cuda.launch("foldbias", "fold_rank_one_f64", (count + THREADS - 1) / THREADS, THREADS, 0,
                        new KernelArgs().ptr(dk).ptr(db).ptr(du).ptr(dout).i32(t).i32(d));
                cuda.download(Pointer.to(out), dout, (long) count * Sizeof.DOUBLE);
            }
        }
        return out;
    }
}
