package org.mechspec.data;

import org.mechspec.compute.Rng;

/**
 * A byte sequence cut into consecutive, non-overlapping blocks of a fixed length (the tail shorter than a block
 * is dropped). Block i covers bytes [i·length, (i+1)·length). Orders over blocks come from the pinned RNG.
 */
public final class ByteBlocks {
    private final byte[] bytes;
    private final int blockLength;
    private final int count;

    public ByteBlocks(byte[] bytes, int blockLength) {
        if (blockLength < 2) {
            throw new IllegalArgumentException("block length must be at least 2 (one input, one target), got "
                    + blockLength);
        }
        if (bytes.length < blockLength) {
            throw new IllegalArgumentException(bytes.length + " bytes hold no block of " + blockLength);
        }
        this.bytes = bytes;
        this.blockLength = blockLength;
        this.count = bytes.length / blockLength;
    }

    public int count() {
        return count;
    }

    public int blockLength() {
        return blockLength;
    }

    /** Token ids of block i. */
    public int[] block(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("block " + i + " of " + count);
        }
        return ByteTokenizer.encode(bytes, i * blockLength, blockLength);
    }

    /** The tokens of the given blocks, concatenated in the given order ([blocks.length, blockLength]). */
    public int[] blocks(int[] indices) {
        int[] out = new int[indices.length * blockLength];
        for (int b = 0; b < indices.length; b++) {
            System.arraycopy(block(indices[b]), 0, out, b * blockLength, blockLength);
        }
        return out;
    }

    /** A Fisher–Yates shuffle of the block indices drawn from {@code rng} (one draw per position, §5). */
    public int[] shuffledOrder(Rng rng) {
        return rng.permutation(count);
    }
}
