package org.mechspec.compute;

import static jcuda.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR;
import static jcuda.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR;
import static jcuda.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_MODE;

import java.nio.charset.StandardCharsets;
import jcuda.CudaException;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUfunction;
import jcuda.driver.CUmodule;
import jcuda.driver.JCudaDriver;

/**
 * The only class the probe touches that links JCuda; kept apart so its load failure stays contained. It loads
 * one real module in the primary context and releases that context again, so a probe (the build's device gate
 * included) leaves no context behind.
 */
final class CudaDriverProbe {
    private static final int COMPUTE_MODE_PROHIBITED = 2;
    private static final int COMPUTE_MODE_EXCLUSIVE_PROCESS = 3;
    private static final String PROBE_MODULE = "rounding";

    private CudaDriverProbe() {
    }

    /** Thrown with the one-line reason the device cannot be used. */
    static final class Unusable extends Exception {
        private static final long serialVersionUID = 1L;

        Unusable(String reason) {
            super(reason, null, false, false);
        }
    }

    static CudaDevice probe() throws Unusable {
        JCudaDriver.setExceptionsEnabled(true);
        JCudaDriver.cuInit(0);
        int[] count = new int[1];
        JCudaDriver.cuDeviceGetCount(count);
        if (count[0] == 0) {
            throw new Unusable("the CUDA driver reports no device");
        }
        int[] version = new int[1];
        JCudaDriver.cuDriverGetVersion(version);
        CUdevice device = new CUdevice();
        JCudaDriver.cuDeviceGet(device, 0);
        String name = name(device);
        int major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        int minor = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        int mode = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
        if (mode == COMPUTE_MODE_PROHIBITED) {
            throw new Unusable("CUDA device 0 (" + name + ") is in compute mode PROHIBITED: no process may use it");
        }
        if (!KernelImages.built()) {
            throw new Unusable("CUDA kernels were not built into this jar (the build found no nvcc: see its log)");
        }
        byte[] image = KernelImages.read(PROBE_MODULE);
        FatBinary.Image chosen = FatBinary.parse(image).imageFor(major, minor);
        if (chosen == null) {
            throw new Unusable("the kernels hold no image for compute capability " + major + "." + minor + " of " + name
                    + " (" + FatBinary.parse(image).images() + ")");
        }
        CUcontext context = new CUcontext();
        try {
            JCudaDriver.cuDevicePrimaryCtxRetain(context, device);
        } catch (CudaException e) {
            String busy = mode == COMPUTE_MODE_EXCLUSIVE_PROCESS
                    ? " (compute mode EXCLUSIVE_PROCESS: another process holds the device)" : "";
            throw new Unusable("cannot create a CUDA context on " + name + ": " + e.getMessage() + busy);
        }
        try {
            JCudaDriver.cuCtxSetCurrent(context);
            CUmodule module = new CUmodule();
            try {
                JCudaDriver.cuModuleLoadData(module, image);
            } catch (CudaException e) {
                throw new Unusable(loadFailure(PROBE_MODULE, e.getMessage(), version[0]));
            }
            JCudaDriver.cuModuleGetFunction(new CUfunction(), module, "round_half_f64");
            JCudaDriver.cuModuleUnload(module);
        } finally {
            JCudaDriver.cuCtxSetCurrent(new CUcontext());
            JCudaDriver.cuDevicePrimaryCtxRelease(device);
        }
        return new CudaDevice(name, version[0], major, minor, mode, chosen.describe());
    }

    /** Why a module did not load, with what an old driver needs to hear. */
    static String loadFailure(String module, String error, int driverVersion) {
        String nvcc = KernelImages.nvccRelease();
        String why = "the CUDA driver (CUDA " + CudaDevice.release(driverVersion) + ", cuDriverGetVersion " + driverVersion
                + ") cannot load kernel image " + module + ".fatbin built by nvcc " + nvcc + ": " + error;
        if (error.contains("UNSUPPORTED_PTX_VERSION") || error.contains("NO_BINARY_FOR_GPU") || error.contains("INVALID_IMAGE")) {
            why += "; it needs a driver for CUDA " + nvcc + " or newer (NVIDIA r580+ for CUDA 13), or kernels rebuilt with an"
                    + " nvcc no newer than the driver (mvn -Dnvcc=PATH)";
        }
        return why;
    }

    private static String name(CUdevice device) {
        byte[] name = new byte[256];
        JCudaDriver.cuDeviceGetName(name, name.length, device);
        String n = new String(name, StandardCharsets.US_ASCII);
        int end = n.indexOf('\0');
        return (end < 0 ? n : n.substring(0, end)).trim();
    }

    private static int attribute(CUdevice device, int attribute) {
        int[] v = new int[1];
        JCudaDriver.cuDeviceGetAttribute(v, attribute, device);
        return v[0];
    }
}
