package org.mechspec.compute;

import jcuda.driver.JCudaDriver;

/** The only class the probe touches that links JCuda; kept apart so its load failure stays contained. */
final class CudaDriverProbe {
    private CudaDriverProbe() {
    }

    static String deviceCountOrReason() {
        JCudaDriver.setExceptionsEnabled(true);
        JCudaDriver.cuInit(0);
        int[] count = new int[1];
        JCudaDriver.cuDeviceGetCount(count);
        return count[0] > 0 ? null : "the CUDA driver reports no device";
    }
}
