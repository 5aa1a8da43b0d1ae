package org.mechspec.compute;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;

/**
 * A kernel's arguments as the driver's parameter buffer: in declaration order, each at an offset aligned to its
 * size, no tail padding. It travels with {@code CU_LAUNCH_PARAM_BUFFER_SIZE}, so the driver refuses a launch whose
 * buffer does not match the kernel's parameter list (a missing or extra argument) instead of reading garbage.
 */
public final class KernelArgs {
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(512).order(ByteOrder.nativeOrder());
    private int size;
    private int count;

    /** A device pointer; {@code null} passes the null pointer (an absent optional input). */
    public KernelArgs ptr(CUdeviceptr p) {
        return put(8, p == null ? 0L : DeviceMemory.address(p));
    }

    /** A device pointer {@code byteOffset} bytes into an allocation (a buffer placed inside a larger one). */
    public KernelArgs ptr(CUdeviceptr allocation, long byteOffset) {
        if (byteOffset < 0) {
            throw new IllegalArgumentException("a pointer offset must not be negative, got " + byteOffset);
        }
        return put(8, DeviceMemory.address(allocation) + byteOffset);
    }

    /** Appends an int argument. */
    public KernelArgs i32(int v) {
        align(4);
        buffer.putInt(size, v);
        size += 4;
        count++;
        return this;
    }

    /** Appends a float argument. */
    public KernelArgs f32(float v) {
        return i32(Float.floatToRawIntBits(v));
    }

    /** Appends a double argument. */
    public KernelArgs f64(double v) {
        return put(8, Double.doubleToRawLongBits(v));
    }

    private KernelArgs put(int bytes, long v) {
        align(bytes);
        buffer.putLong(size, v);
        size += bytes;
        count++;
        return this;
    }

    private void align(int bytes) {
        size = (size + bytes - 1) / bytes * bytes;
    }

    /** Bytes in the buffer. */
    public int size() {
        return size;
    }

    /** Arguments added. */
    public int count() {
        return count;
    }

    /** The {@code extra} argument of {@code cuLaunchKernel}. */
    Pointer extra() {
        return Pointer.to(JCudaDriver.CU_LAUNCH_PARAM_BUFFER_POINTER, Pointer.to(buffer),
                JCudaDriver.CU_LAUNCH_PARAM_BUFFER_SIZE, Pointer.to(new long[] {size}), JCudaDriver.CU_LAUNCH_PARAM_END);
    }
}
