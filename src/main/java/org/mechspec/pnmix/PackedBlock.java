package org.mechspec.pnmix;

import org.mechspec.compute.BitPacking;
import org.mechspec.compute.HalfFloat;

/**
 * One group-quantized block as it sits in memory: the packed codes (layout in {@link BitPacking}) and, per
 * quantization group, 4 bytes of metadata: fp16 scale then fp16 zero (the min, or the low level of a 1-bit
 * two-level group), little-endian. Value = zero + code·scale.
 */
public record PackedBlock(byte[] codes, byte[] meta) {
    public PackedBlock {
        if (codes == null || meta == null) {
            throw new IllegalArgumentException("a packed block needs codes and metadata");
        }
        if (meta.length % 4 != 0) {
            throw new IllegalArgumentException("metadata holds 4 bytes per group, got " + meta.length + " bytes");
        }
    }

    /** Bytes held: codes plus metadata. */
    public long bytes() {
        return (long) codes.length + meta.length;
    }

    public double scale(int group) {
        return HalfFloat.fromHalfBits(BitPacking.getHalf(meta, 4 * group));
    }

    public double zero(int group) {
        return HalfFloat.fromHalfBits(BitPacking.getHalf(meta, 4 * group + 2));
    }
}
