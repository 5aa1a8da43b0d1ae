package org.mechspec.pnmix;

import jcuda.driver.CUdeviceptr;
import org.mechspec.compute.KernelArgs;

/** A call's device buffer: {@code bytes} bytes at {@code offset} into an allocation. */
record CudaSlice(CUdeviceptr allocation, long offset, long bytes) {
    /** A whole allocation of {@code bytes} bytes. */
    static CudaSlice whole(CUdeviceptr allocation, long bytes) {
        return new CudaSlice(allocation, 0, bytes);
    }

    /** Adds this buffer's address to a kernel's arguments. */
    void into(KernelArgs args) {
        args.ptr(allocation, offset);
    }

    /** The address, for copies and memsets. */
    CUdeviceptr address() {
        return offset == 0 ? allocation : allocation.withByteOffset(offset);
    }
}
