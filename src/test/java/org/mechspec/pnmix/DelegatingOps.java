package org.mechspec.pnmix;

import org.mechspec.compute.CpuPackedCacheOps;
import org.mechspec.compute.OneBitLevels;
import org.mechspec.compute.PackedAttention;
import org.mechspec.compute.PackedBlock;
import org.mechspec.compute.PackedCacheOps;
import org.mechspec.compute.PackedKvCache;

/** The CPU twin, for mutant kernels to override what they break. */
class DelegatingOps implements PackedCacheOps {
    final CpuPackedCacheOps cpu = new CpuPackedCacheOps();

    @Override
    public String name() {
        return "mutant";
    }

    @Override
    public byte[] packPerChannel(int[] codes, int tokens, int[] bits) {
        return cpu.packPerChannel(codes, tokens, bits);
    }

    @Override
    public int[] unpackPerChannel(byte[] packed, int tokens, int[] bits) {
        return cpu.unpackPerChannel(packed, tokens, bits);
    }

    @Override
    public byte[] packPerToken(int[] codes, int tokens, int channels, int groupChannels, int bits) {
        return cpu.packPerToken(codes, tokens, channels, groupChannels, bits);
    }

    @Override
    public int[] unpackPerToken(byte[] packed, int tokens, int channels, int groupChannels, int bits) {
        return cpu.unpackPerToken(packed, tokens, channels, groupChannels, bits);
    }

    @Override
    public PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit) {
        return cpu.quantizePerChannel(x, tokens, bits, oneBit);
    }

    @Override
    public PackedBlock quantizePerToken(double[] x, int tokens, int channels, int groupChannels, int bits, OneBitLevels oneBit) {
        return cpu.quantizePerToken(x, tokens, channels, groupChannels, bits, oneBit);
    }

    @Override
    public double[] dequantizePerChannel(PackedBlock block, int tokens, int[] bits) {
        return cpu.dequantizePerChannel(block, tokens, bits);
    }

    @Override
    public double[] dequantizePerToken(PackedBlock block, int tokens, int channels, int groupChannels, int bits) {
        return cpu.dequantizePerToken(block, tokens, channels, groupChannels, bits);
    }

    @Override
    public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal, boolean withLogits) {
        return cpu.attend(cache, q, queryHeads, queryLen, causal, withLogits);
    }

    @Override
    public float[] attendFp32(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal) {
        return cpu.attendFp32(cache, q, queryHeads, queryLen, causal);
    }

    @Override
    public long peakWorkingBytes() {
        return cpu.peakWorkingBytes();
    }
}
