package org.mechspec.pnmix;

import org.mechspec.compute.OneBitLevels;

/** Passes every operation to another implementation; subclasses override what they observe or change. */
public class ForwardingPackedCacheOps implements PackedCacheOps {
    protected final PackedCacheOps inner;

    public ForwardingPackedCacheOps(PackedCacheOps inner) {
        this.inner = inner;
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public byte[] packPerChannel(int[] codes, int tokens, int[] bits) {
        return inner.packPerChannel(codes, tokens, bits);
    }

    @Override
    public int[] unpackPerChannel(byte[] packed, int tokens, int[] bits) {
        return inner.unpackPerChannel(packed, tokens, bits);
    }

    @Override
    public byte[] packPerToken(int[] codes, int tokens, int channels, int groupChannels, int bits) {
        return inner.packPerToken(codes, tokens, channels, groupChannels, bits);
    }

    @Override
    public int[] unpackPerToken(byte[] packed, int tokens, int channels, int groupChannels, int bits) {
        return inner.unpackPerToken(packed, tokens, channels, groupChannels, bits);
    }

    @Override
    public PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit) {
        return inner.quantizePerChannel(x, tokens, bits, oneBit);
    }

    @Override
    public PackedBlock quantizePerToken(double[] x, int tokens, int channels, int groupChannels, int bits, OneBitLevels oneBit) {
        return inner.quantizePerToken(x, tokens, channels, groupChannels, bits, oneBit);
    }

    @Override
    public double[] dequantizePerChannel(PackedBlock block, int tokens, int[] bits) {
        return inner.dequantizePerChannel(block, tokens, bits);
    }

    @Override
    public double[] dequantizePerToken(PackedBlock block, int tokens, int channels, int groupChannels, int bits) {
        return inner.dequantizePerToken(block, tokens, channels, groupChannels, bits);
    }

    @Override
    public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal, boolean withLogits) {
        return inner.attend(cache, q, queryHeads, queryLen, causal, withLogits);
    }

    @Override
    public float[] attendFp32(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal) {
        return inner.attendFp32(cache, q, queryHeads, queryLen, causal);
    }

    @Override
    public double[] decode(PackedKvCache cache, double[] q, int queryHeads) {
        return inner.decode(cache, q, queryHeads);
    }

    @Override
    public float[] decodeFp32(PackedKvCache cache, float[] q, int queryHeads) {
        return inner.decodeFp32(cache, q, queryHeads);
    }

    @Override
    public long peakWorkingBytes() {
        return inner.peakWorkingBytes();
    }
}
