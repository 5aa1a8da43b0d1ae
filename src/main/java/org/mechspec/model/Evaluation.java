package org.mechspec.model;

import org.mechspec.data.TokenBlocks;

/**
 * Next-byte NLL of a model over chosen blocks: each block of L bytes gives L−1 predictions (byte i+1 given bytes
 * 0..i). Blocks are evaluated in the given order, a fixed number per forward pass, so the result is deterministic.
 */
public final class Evaluation {
    private Evaluation() {
    }

    /** Per-prediction NLL (nats), block by block in {@code indices} order. */
    public static double[] tokenNll(Qwen2Model model, TokenBlocks blocks, int[] indices, int blocksPerPass) {
        int perBlock = blocks.blockLength() - 1;
        double[] nll = new double[indices.length * perBlock];
        for (int start = 0; start < indices.length; start += blocksPerPass) {
            int n = Math.min(blocksPerPass, indices.length - start);
            int[] chunk = new int[n];
            System.arraycopy(indices, start, chunk, 0, n);
            double[] part = model.forward(Batch.nextToken(blocks.blocks(chunk), blocks.blockLength())).tokenNll();
            System.arraycopy(part, 0, nll, start * perBlock, part.length);
        }
        return nll;
    }

    public static double meanNll(double[] nll) {
        double sum = 0.0;
        for (double v : nll) {
            sum += v;
        }
        return sum / nll.length;
    }

    public static double perplexity(double[] nll) {
        return StrictMath.exp(meanNll(nll));
    }

    /** 0, 1, …, count−1. */
    public static int[] allBlocks(int count) {
        int[] idx = new int[count];
        for (int i = 0; i < count; i++) {
            idx[i] = i;
        }
        return idx;
    }

    /** {@code n} block indices spread evenly over [0, count): ⌊i·count/n⌋. */
    public static int[] evenlySpaced(int count, int n) {
        int[] idx = new int[n];
        for (int i = 0; i < n; i++) {
            idx[i] = (int) ((long) i * count / n);
        }
        return idx;
    }
}
