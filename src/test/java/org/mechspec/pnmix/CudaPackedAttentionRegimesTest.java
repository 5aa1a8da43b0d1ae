package org.mechspec.pnmix;

import static org.junit.jupiter.api.Assumptions.assumeFalse;

import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Backend;
import org.mechspec.compute.Backends;
import org.mechspec.compute.UnavailableBackend;

/**
 * The packed-attention property halves' regimes (dominant sink keys, large and shifted logits, ties, boundary token
 * counts, head dims to 256, GQA 1–8) on pnmix.cu: on a GPU, and in CI on the emulated driver (tag cuda, the emulated
 * pass), with fewer and smaller examples, since the emulator runs each thread as a fiber.
 */
@Tag("pn-mix")
@Tag("cuda")
class CudaPackedAttentionRegimesTest {
    private static final long EMULATOR_BUDGET = 1_500_000;

    private static PackedCacheOps cuda() {
        List<Backend> device = Backends.forContract(true);
        assumeFalse(device.isEmpty(), () -> "no CUDA backend in this run: " + Backends.cudaUnavailableReason());
        assumeFalse(device.get(0) instanceof UnavailableBackend, () -> ((UnavailableBackend) device.get(0)).reason());
        return PackedCacheOps.forBackend(device.get(0));
    }

    @Test
    void fp64PackedAttentionWithinBoundOverRegimes() {
        PnMixContracts.packedAttentionWithinBoundOverRegimes(cuda(), 16, EMULATOR_BUDGET);
    }

    @Test
    void fp32PackedAttentionWithinBoundOverRegimes() {
        PnMixContracts.fp32PackedAttentionWithinBoundOverRegimes(cuda(), 16, EMULATOR_BUDGET);
    }
}
