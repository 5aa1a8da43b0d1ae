package org.mechspec.kernels;

import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Backend;
import org.mechspec.compute.Backends;
import org.mechspec.compute.UnavailableBackend;

/**
 * The attention property halves' adversarial regimes (large and shifted logits, masked rows, ties, boundary shapes) on
 * the CUDA kernels: on a GPU, and in CI on the emulated driver (tag cuda, the emulated pass). Property halves run on the
 * CPU or the judged worker; this puts the same inputs through attention.cu, with fewer and smaller examples, since the
 * emulator runs each thread as a fiber.
 */
@Tag("kernels")
@Tag("cuda")
class CudaAttentionRegimesTest {
    private static Backend cuda() {
        List<Backend> device = Backends.forContract(true);
        assumeFalse(device.isEmpty(), () -> "no CUDA backend in this run: " + Backends.cudaUnavailableReason());
        assumeFalse(device.get(0) instanceof UnavailableBackend, () -> ((UnavailableBackend) device.get(0)).reason());
        return device.get(0);
    }

    @Test
    void fp64KernelWithinBoundOverRegimes() {
        KernelContracts.fp64WithinBoundOverRegimes(cuda(), 24, 400_000);
    }

    @Test
    void fp32KernelWithinBoundOverRegimes() {
        KernelContracts.fp32WithinBoundOverRegimes(cuda(), 24, 400_000);
    }
}
