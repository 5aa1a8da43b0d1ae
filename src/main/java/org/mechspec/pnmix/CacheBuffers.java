package org.mechspec.pnmix;


import java.util.function.LongConsumer;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import org.mechspec.compute.CudaBackend;

/**
 * Device buffers freed together: those of one call of {@link CudaPackedCacheOps}, of a decode's own buffers
 * ({@link CudaSplitKDecode}), of a cache's device copy ({@link CudaCacheCopy}) or of one scratch role
 * ({@link CudaScratch}).
 */
final class CacheBuffers implements AutoCloseable {
    private final CudaBackend.DeviceBuffers owned;
    private final LongConsumer held;
    private long bytes;

    /** {@code held} hears the bytes allocated so far after every allocation. */
    CacheBuffers(CudaBackend backend, LongConsumer held) {
        this.owned = backend.new DeviceBuffers();
        this.held = held;
    }

    CUdeviceptr upload(byte[] a) {
        return upload(Pointer.to(a), a.length);
    }

    CUdeviceptr upload(int[] a) {
        return upload(Pointer.to(a), (long) a.length * Sizeof.INT);
    }

    CUdeviceptr upload(double[] a) {
        return upload(Pointer.to(a), (long) a.length * Sizeof.DOUBLE);
    }

    CUdeviceptr upload(float[] a) {
        return upload(Pointer.to(a), (long) a.length * Sizeof.FLOAT);
    }

    private CUdeviceptr upload(Pointer p, long n) {
        count(n);
        return n == 0 ? owned.poisoned(1) : owned.upload(p, n); // an empty buffer still needs a valid pointer
    }

    CUdeviceptr poisoned(long n) {
        count(n);
        return owned.poisoned(Math.max(n, 1));
    }

    void download(byte[] a, CUdeviceptr p) {
        if (a.length > 0) {
            owned.download(Pointer.to(a), p, a.length);
        }
    }

    void download(int[] a, CUdeviceptr p) {
        if (a.length > 0) {
            owned.download(Pointer.to(a), p, (long) a.length * Sizeof.INT);
        }
    }

    void download(double[] a, CUdeviceptr p) {
        if (a.length > 0) {
            owned.download(Pointer.to(a), p, (long) a.length * Sizeof.DOUBLE);
        }
    }

    void download(float[] a, CUdeviceptr p) {
        if (a.length > 0) {
            owned.download(Pointer.to(a), p, (long) a.length * Sizeof.FLOAT);
        }
    }

    /** Bytes allocated so far, each buffer at least one byte. */
    long bytes() {
        return bytes;
    }

    /** False once a sticky fault made this process's CUDA unusable: the pointers must not be used again. */
    boolean live() {
        return owned.live();
    }

    private void count(long n) {
        bytes += Math.max(n, 1);
        held.accept(bytes);
    }

    @Override
    public void close() {
        owned.close();
    }
}
