package org.mechspec.model;

/**
 * Token-major attention layout as the projections produce it: q and the attention output are
 * [batch·seqLen, heads·headDim], k and v are [batch·seqLen, kvHeads·headDim]. Query head h reads KV head
 * h / (heads / kvHeads) (grouped-query attention).
 */
public record HeadLayout(int batch, int seqLen, int heads, int kvHeads, int headDim) {

    public HeadLayout {
        if (batch <= 0 || seqLen <= 0 || heads <= 0 || kvHeads <= 0 || headDim <= 0 || heads % kvHeads != 0) {
            throw new IllegalArgumentException("invalid head layout " + batch + "x" + seqLen + ", heads " + heads
                    + ", kv heads " + kvHeads + ", head dim " + headDim);
        }
    }

    public int tokens() {
        return batch * seqLen;
    }

    /** Query heads per KV head. */
    public int groupSize() {
        return heads / kvHeads;
    }

    public int kvHeadOf(int head) {
        return head / groupSize();
    }

    /** Offset of query (or output) vector (b, t, h). */
    public int queryOffset(int b, int t, int h) {
        return ((b * seqLen + t) * heads + h) * headDim;
    }

    /** Offset of key (or value) vector (b, t, g) of KV head g. */
    public int kvOffset(int b, int t, int g) {
        return ((b * seqLen + t) * kvHeads + g) * headDim;
    }

    public void requireShapes(Tensor q, Tensor k, Tensor v, Tensor out) {
        require("q", q, tokens() * heads * headDim);
        require("k", k, tokens() * kvHeads * headDim);
        require("v", v, tokens() * kvHeads * headDim);
        require("out", out, tokens() * heads * headDim);
    }

    private static void require(String name, Tensor t, int size) {
        if (t.size() != size) {
            throw new IllegalArgumentException(name + " is " + t + ", the head layout needs " + size + " elements");
        }
    }
}
