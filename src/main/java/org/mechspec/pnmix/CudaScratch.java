package org.mechspec.pnmix;

import static jcuda.driver.JCudaDriver.cuMemsetD8;

import java.util.EnumMap;
import java.util.Map;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import org.mechspec.compute.CudaBackend;

/**
 * Device buffers reused from call to call for what every call brings anew (the query, the fp16 residual, the dims)
 * or takes back (the output, the logits), one per {@link Role}. A role's allocation grows, to a power of two, only
 * when a call needs more than it holds. A call's bytes sit at the end of the allocation, so a kernel that reads or
 * writes past them still faults on the emulated driver, as when each call allocated its buffers at their exact size.
 */
final class CudaScratch implements AutoCloseable {
    enum Role { RESIDUAL_KEYS, RESIDUAL_VALUES, DIMS, QUERY, OUTPUT, LOGITS, WEIGHTS }

    private static final long SMALLEST = 256;

    private final CudaBackend cuda;
    private final Map<Role, CacheBuffers> owners = new EnumMap<>(Role.class);
    private final Map<Role, CUdeviceptr> allocations = new EnumMap<>(Role.class);
    private final Map<Role, Long> capacities = new EnumMap<>(Role.class);

    CudaScratch(CudaBackend cuda) {
        this.cuda = cuda;
    }

    CudaSlice upload(Role role, byte[] a) {
        return upload(role, Pointer.to(a), a.length, 1);
    }

    CudaSlice upload(Role role, int[] a) {
        return upload(role, Pointer.to(a), (long) a.length * Sizeof.INT, Sizeof.INT);
    }

    CudaSlice upload(Role role, double[] a) {
        return upload(role, Pointer.to(a), (long) a.length * Sizeof.DOUBLE, Sizeof.DOUBLE);
    }

    CudaSlice upload(Role role, float[] a) {
        return upload(role, Pointer.to(a), (long) a.length * Sizeof.FLOAT, Sizeof.FLOAT);
    }

    /** An empty array still gets a (poisoned) element, so the kernel has a valid pointer, as {@link CacheBuffers} does. */
    private CudaSlice upload(Role role, Pointer host, long bytes, int elementBytes) {
        if (bytes == 0) {
            return poisoned(role, 0, elementBytes);
        }
        CudaSlice p = place(role, bytes);
        cuda.upload(p.address(), host, bytes);
        return p;
    }

    /** {@code bytes} of 0xFF (a NaN pattern), so an element the kernel never writes shows up. */
    CudaSlice poisoned(Role role, long bytes, int elementBytes) {
        CudaSlice p = place(role, Math.max(bytes, elementBytes));
        cuMemsetD8(p.address(), (byte) 0xFF, p.bytes());
        return p;
    }

    void download(double[] a, CudaSlice p) {
        if (a.length > 0) {
            cuda.download(Pointer.to(a), p.address(), (long) a.length * Sizeof.DOUBLE);
        }
    }

    void download(float[] a, CudaSlice p) {
        if (a.length > 0) {
            cuda.download(Pointer.to(a), p.address(), (long) a.length * Sizeof.FLOAT);
        }
    }

    /** False once a sticky fault made CUDA unusable: the scratch must then be dropped, never used. */
    boolean live() {
        return owners.values().stream().allMatch(CacheBuffers::live);
    }

    /** The last {@code bytes} of the role's allocation, grown first if it is too small. */
    private CudaSlice place(Role role, long bytes) {
        long capacity = capacities.getOrDefault(role, 0L);
        if (capacity < bytes) {
            CacheBuffers old = owners.remove(role);
            if (old != null) {
                old.close();
            }
            capacities.remove(role);
            capacity = Math.max(SMALLEST, Long.highestOneBit(bytes - 1) << 1);
            CacheBuffers owner = new CacheBuffers(cuda, held -> { });
            owners.put(role, owner);
            allocations.put(role, owner.poisoned(capacity));
            capacities.put(role, capacity);
        }
        // capacity is a power of two of at least 256 and bytes a whole number of elements, so the offset keeps them aligned.
        return new CudaSlice(allocations.get(role), capacity - bytes, bytes);
    }

    @Override
    public void close() {
        RuntimeException first = null;
        for (CacheBuffers owner : owners.values()) {
            try {
                owner.close();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        owners.clear();
        allocations.clear();
        capacities.clear();
        if (first != null) {
            throw first;
        }
    }
}
