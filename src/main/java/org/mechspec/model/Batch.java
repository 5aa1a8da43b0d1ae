package org.mechspec.model;

import java.util.Arrays;

/**
 * Token ids of {@code batch} sequences of {@code seqLen} tokens, row-major, with next-token targets; a target of
 * {@link #IGNORE} contributes nothing to the loss.
 */
public record Batch(int[] inputs, int[] targets, int batch, int seqLen) {
    public static final int IGNORE = -1;

    public Batch {
        if (batch <= 0 || seqLen <= 0) {
            throw new IllegalArgumentException("batch and seqLen must be positive, got " + batch + "x" + seqLen);
        }
        if (inputs.length != batch * seqLen || (targets != null && targets.length != inputs.length)) {
            throw new IllegalArgumentException("a " + batch + "x" + seqLen + " batch needs " + batch * seqLen
                    + " inputs and targets, got " + inputs.length + " and "
                    + (targets == null ? "none" : String.valueOf(targets.length)));
        }
    }

    /**
     * Next-token prediction over consecutive blocks of {@code blockLength} tokens: inputs are tokens 0..L−2 of
     * each block, targets tokens 1..L−1 (so a block of L tokens yields L−1 predictions).
     */
    public static Batch nextToken(int[] blocks, int blockLength) {
        if (blockLength < 2 || blocks.length % blockLength != 0 || blocks.length == 0) {
            throw new IllegalArgumentException(blocks.length + " tokens are not whole blocks of " + blockLength);
        }
        int count = blocks.length / blockLength;
        int seq = blockLength - 1;
        int[] in = new int[count * seq];
        int[] tg = new int[count * seq];
        for (int b = 0; b < count; b++) {
            System.arraycopy(blocks, b * blockLength, in, b * seq, seq);
            System.arraycopy(blocks, b * blockLength + 1, tg, b * seq, seq);
        }
        return new Batch(in, tg, count, seq);
    }

    /** Number of targets that count in the loss. */
    public int predictedTokens() {
        return targets == null ? 0 : (int) Arrays.stream(targets).filter(t -> t != IGNORE).count();
    }
}
