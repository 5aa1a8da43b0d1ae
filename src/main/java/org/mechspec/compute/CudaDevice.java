package org.mechspec.compute;

/**
 * What the probe learnt about device 0: its name, the driver's CUDA version (cuDriverGetVersion, e.g. 13000),
 * compute capability, compute mode, and the image of the probe's module that the driver's rule picks.
 */
public record CudaDevice(String name, int driverVersion, int ccMajor, int ccMinor, int computeMode, String image) {
    /** The project's emulated driver (src/test/emulator) names itself so; its runs are never GPU evidence. */
    static final String EMULATOR_PREFIX = "mechspec CUDA emulator";

    /** Whether this is the project's emulated driver rather than a GPU (never GPU evidence). */
    public boolean emulated() {
        return name.startsWith(EMULATOR_PREFIX);
    }

    /** e.g. "13.0". */
    public String driverRelease() {
        return release(driverVersion);
    }

    /** The compute capability as major.minor. */
    public String computeCapability() {
        return ccMajor + "." + ccMinor;
    }

    static String release(int version) {
        return version / 1000 + "." + version % 1000 / 10;
    }

    /** One line naming the device for logs and artifacts. */
    public String describe() {
        return name + ", compute capability " + computeCapability() + ", driver for CUDA " + driverRelease()
                + ", kernels " + image + " (nvcc " + KernelImages.nvccRelease() + ")";
    }
}
