package org.mechspec.model;

import org.mechspec.data.TokenBlocks;

/**
 * The baseline the fixture must beat: a byte unigram model fitted on the training bytes with add-one smoothing
 * (so bytes absent from training keep a finite NLL), p(b) = (count(b) + 1) / (n + 256).
 */
public final class UnigramByteModel {
    private final double[] nll = new double[256];

    private UnigramByteModel(long[] counts, long total) {
        for (int b = 0; b < 256; b++) {
            nll[b] = -StrictMath.log((counts[b] + 1.0) / (total + 256.0));
        }
    }

    public static UnigramByteModel fit(byte[] training) {
        long[] counts = new long[256];
        for (byte b : training) {
            counts[b & 0xFF]++;
        }
        return new UnigramByteModel(counts, training.length);
    }

    /** NLL of the same predictions {@link Evaluation#tokenNll} scores: bytes 1..L−1 of each block. */
    public double[] tokenNll(TokenBlocks blocks, int[] indices) {
        int perBlock = blocks.blockLength() - 1;
        double[] out = new double[indices.length * perBlock];
        for (int i = 0; i < indices.length; i++) {
            int[] tokens = blocks.block(indices[i]);
            for (int t = 1; t < tokens.length; t++) {
                out[i * perBlock + t - 1] = nll[tokens[t]];
            }
        }
        return out;
    }
}
