package org.mechspec.compute;

import jcuda.driver.CUdeviceptr;

/**
 * Device allocations whose address the host can read, for {@link KernelArgs}: JCuda keeps a pointer's value
 * protected, so the project allocates through this subclass.
 */
final class DeviceMemory extends CUdeviceptr {
    /** The device address of p, which must come from {@link #allocation()}. */
    static long address(CUdeviceptr p) {
        if (!(p instanceof DeviceMemory m)) {
            throw new IllegalArgumentException("a kernel argument must be a device allocation made by CudaBackend");
        }
        return m.getNativePointer();
    }

    static DeviceMemory allocation() {
        return new DeviceMemory();
    }
}
