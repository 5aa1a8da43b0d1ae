package org.mechspec.data;

import org.mechspec.compute.Rng;

/**
 * A token sequence cut into consecutive, non-overlapping blocks of a fixed length (the tail shorter than a block
 * is dropped). Block i covers tokens [i·length, (i+1)·length). Orders over blocks come from the pinned RNG.
 */
public final class TokenBlocks {
    private final int[] tokens;
    private final int blockLength;
    private final int count;

    /** The whole blocks of {@code blockLength} tokens in {@code tokens} (a shorter tail is dropped). */
    public TokenBlocks(int[] tokens, int blockLength) {
        if (blockLength < 2) {
            throw new IllegalArgumentException("block length must be at least 2 (one input, one target), got "
                    + blockLength);
        }
        if (tokens.length < blockLength) {
            throw new IllegalArgumentException(tokens.length + " tokens hold no block of " + blockLength);
        }
        this.tokens = tokens;
        this.blockLength = blockLength;
        this.count = tokens.length / blockLength;
    }

    /** Byte-level blocks: every byte is one token ({@link ByteTokenizer}). */
    public static TokenBlocks ofBytes(byte[] bytes, int blockLength) {
        return new TokenBlocks(ByteTokenizer.encode(bytes), blockLength);
    }

    /** How many blocks there are. */
    public int count() {
        return count;
    }

    /** Tokens per block. */
    public int blockLength() {
        return blockLength;
    }

    /** Token ids of block i. */
    public int[] block(int i) {
        if (i < 0 || i >= count) {
            throw new IndexOutOfBoundsException("block " + i + " of " + count);
        }
        int[] out = new int[blockLength];
        System.arraycopy(tokens, i * blockLength, out, 0, blockLength);
        return out;
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
