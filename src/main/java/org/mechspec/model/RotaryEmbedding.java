package org.mechspec.model;

/** The position rotation the layers apply to q and k in forward and undo on their gradients in backward. */
interface RotaryEmbedding {
    /** Rotates every head of x [batch·seqLen, heads·headDim] in place, by +angle (direction 1) or −angle (−1). */
    void rotate(Tensor x, int batch, int seqLen, int heads, int direction);
}
