package org.mechspec.oal;

import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Backend;
import org.mechspec.compute.Backends;
import org.mechspec.compute.UnavailableBackend;

/**
 * The forms property halves' regimes (large similarities, dominant keys, ties, lengths around the kernels' thread
 * counts, head dims 3–256, GQA 1–8) on oal.cu's dense and recurrent kernels: on a GPU, and in CI on the emulated driver
 * (tag cuda, the emulated pass), with fewer and smaller examples, since the emulator runs each thread as a fiber.
 */
@Tag("oal")
@Tag("cuda")
class CudaOalRegimesTest {
    private static final long EMULATOR_BUDGET = 4_000_000;

    @Test
    void bothFormsWithinBoundOverRegimes() {
        List<Backend> device = Backends.forContract(true);
        assumeFalse(device.isEmpty(), () -> "no CUDA backend in this run: " + Backends.cudaUnavailableReason());
        assumeFalse(device.get(0) instanceof UnavailableBackend, () -> ((UnavailableBackend) device.get(0)).reason());
        OalContracts.formsWithinBoundOverRegimes(GroupedQuadraticAttentionOps.forBackend(device.get(0)), 16, EMULATOR_BUDGET,
                OalContracts.Form.BOTH);
    }
}
