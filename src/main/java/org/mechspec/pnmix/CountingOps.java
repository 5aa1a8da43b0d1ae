package org.mechspec.pnmix;


/** Passes every operation through and counts the attention calls made over the mechanism's cache. */
final class CountingOps extends ForwardingPackedCacheOps {
    private int attentionCalls;

    CountingOps(PackedCacheOps inner) {
        super(inner);
    }

    int attentionCalls() {
        return attentionCalls;
    }

    @Override
    public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal, boolean withLogits) {
        attentionCalls++;
        return inner.attend(cache, q, queryHeads, queryLen, causal, withLogits);
    }

    @Override
    public float[] attendFp32(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal) {
        attentionCalls++;
        return inner.attendFp32(cache, q, queryHeads, queryLen, causal);
    }

    @Override
    public double[] decode(PackedKvCache cache, double[] q, int queryHeads) {
        attentionCalls++;
        return inner.decode(cache, q, queryHeads);
    }

    @Override
    public float[] decodeFp32(PackedKvCache cache, float[] q, int queryHeads) {
        attentionCalls++;
        return inner.decodeFp32(cache, q, queryHeads);
    }
}
