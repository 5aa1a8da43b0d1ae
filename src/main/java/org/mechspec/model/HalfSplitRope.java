package org.mechspec.model;

/**
 * Qwen2's rotary position embedding, half-split layout ("rotate_half"): dimension i of the first half pairs with
 * i + d/2, ω_i = θ^(−2i/d), angle = position·ω_i; x'_i = x_i·cos − x_{i+d/2}·sin,
 * x'_{i+d/2} = x_{i+d/2}·cos + x_i·sin. Position = token index within the sequence.
 */
final class HalfSplitRope implements RotaryEmbedding {
    private final int headDim;
    private final int maxPositions;
    private final double[] cos; // [position, headDim/2]
    private final double[] sin;

    HalfSplitRope(int headDim, int maxPositions, double theta) {
        this.headDim = headDim;
        this.maxPositions = maxPositions;
        int half = headDim / 2;
        cos = new double[maxPositions * half];
        sin = new double[maxPositions * half];
        for (int pos = 0; pos < maxPositions; pos++) {
            for (int i = 0; i < half; i++) {
                double angle = pos * StrictMath.pow(theta, -2.0 * i / headDim);
                cos[pos * half + i] = StrictMath.cos(angle);
                sin[pos * half + i] = StrictMath.sin(angle);
            }
        }
    }

    /**
     * Rotates every head vector of x ([batch·seqLen, heads·headDim]) in place; {@code direction} +1 applies RoPE,
     * −1 applies its inverse (the transpose, which is what backward needs).
     */
    @Override
    public void rotate(Tensor x, int batch, int seqLen, int heads, int direction) {
        if (seqLen > maxPositions) {
            throw new IllegalArgumentException("sequence length " + seqLen + " exceeds max_position_embeddings "
                    + maxPositions);
        }
        int half = headDim / 2;
        for (int b = 0; b < batch; b++) {
            for (int t = 0; t < seqLen; t++) {
                for (int h = 0; h < heads; h++) {
                    int off = ((b * seqLen + t) * heads + h) * headDim;
                    for (int i = 0; i < half; i++) {
                        double c = cos[t * half + i];
                        double s = direction * sin[t * half + i];
                        double x1 = x.get(off + i);
                        double x2 = x.get(off + i + half);
                        x.set(off + i, x1 * c - x2 * s);
                        x.set(off + i + half, x2 * c + x1 * s);
                    }
                }
            }
        }
    }
}
