package org.mechspec.pnmix;

import org.mechspec.compute.BitPacking;
import org.mechspec.compute.OneBitLevels;

/**
 * A right implementation with its own layout, as {@code src/test/worker/corpus/right_pnmix_own_bit_order.py} is: the CPU twin's
 * codes, metadata and arithmetic, with every packed stream MSB-first (code i at bits [i·b, (i+1)·b) from the most
 * significant bit of the stream's first byte, its most significant bit first; streams where the twin puts them). Its
 * pack, unpack, dequantize and attention all read that layout; the paper leaves it free, so every check must hold.
 */
class OwnBitOrderOps extends DelegatingOps {
    @Override
    public String name() {
        return "own-bit-order";
    }

    static void put(byte[] out, int byteOffset, int index, int bits, int code) {
        for (int k = 0; k < bits; k++) {
            long pos = (long) index * bits + k;
            int bit = (code >>> (bits - 1 - k)) & 1;
            out[byteOffset + (int) (pos >>> 3)] |= (byte) (bit << (7 - (int) (pos & 7)));
        }
    }

    static int get(byte[] in, int byteOffset, int index, int bits) {
        int code = 0;
        for (int k = 0; k < bits; k++) {
            long pos = (long) index * bits + k;
            code = (code << 1) | ((in[byteOffset + (int) (pos >>> 3)] >>> (7 - (int) (pos & 7))) & 1);
        }
        return code;
    }

    @Override
    public byte[] packPerChannel(int[] codes, int tokens, int[] bits) {
        PackedCacheOps.checkCodes(codes, (long) tokens * bits.length, bits, bits.length);
        int[] off = BitPacking.channelOffsets(tokens, bits);
        byte[] out = new byte[off[bits.length]];
        for (int c = 0; c < bits.length; c++) {
            for (int t = 0; t < tokens; t++) {
                put(out, off[c], t, bits[c], codes[t * bits.length + c]);
            }
        }
        return out;
    }

    @Override
    public int[] unpackPerChannel(byte[] packed, int tokens, int[] bits) {
        int[] off = BitPacking.channelOffsets(tokens, bits);
        if (packed.length != off[bits.length]) {
            throw new IllegalArgumentException("packed per-channel codes have " + packed.length + " bytes, the layout needs " + off[bits.length]);
        }
        int[] codes = new int[tokens * bits.length];
        for (int c = 0; c < bits.length; c++) {
            for (int t = 0; t < tokens; t++) {
                codes[t * bits.length + c] = get(packed, off[c], t, bits[c]);
            }
        }
        return codes;
    }

    @Override
    public byte[] packPerToken(int[] codes, int tokens, int channels, int groupChannels, int bits) {
        int groups = BitPacking.groupsPerToken(channels, groupChannels);
        int gb = BitPacking.tokenGroupBytes(groupChannels, bits);
        int[] widths = new int[channels];
        java.util.Arrays.fill(widths, bits);
        PackedCacheOps.checkCodes(codes, (long) tokens * channels, widths, channels);
        byte[] out = new byte[tokens * groups * gb];
        for (int t = 0; t < tokens; t++) {
            for (int g = 0; g < groups; g++) {
                for (int i = 0; i < groupChannels; i++) {
                    put(out, (t * groups + g) * gb, i, bits, codes[t * channels + g * groupChannels + i]);
                }
            }
        }
        return out;
    }

    @Override
    public int[] unpackPerToken(byte[] packed, int tokens, int channels, int groupChannels, int bits) {
        int groups = BitPacking.groupsPerToken(channels, groupChannels);
        int gb = BitPacking.tokenGroupBytes(groupChannels, bits);
        if (packed.length != tokens * groups * gb) {
            throw new IllegalArgumentException("packed per-token codes have " + packed.length + " bytes, the layout needs " + tokens * groups * gb);
        }
        int[] codes = new int[tokens * channels];
        for (int t = 0; t < tokens; t++) {
            for (int g = 0; g < groups; g++) {
                for (int i = 0; i < groupChannels; i++) {
                    codes[t * channels + g * groupChannels + i] = get(packed, (t * groups + g) * gb, i, bits);
                }
            }
        }
        return codes;
    }

    @Override
    public PackedBlock quantizePerChannel(double[] x, int tokens, int[] bits, OneBitLevels oneBit) {
        PackedBlock b = cpu.quantizePerChannel(x, tokens, bits, oneBit);
        return new PackedBlock(packPerChannel(cpu.unpackPerChannel(b.codes(), tokens, bits), tokens, bits), b.meta());
    }

    @Override
    public PackedBlock quantizePerToken(double[] x, int tokens, int channels, int groupChannels, int bits, OneBitLevels oneBit) {
        PackedBlock b = cpu.quantizePerToken(x, tokens, channels, groupChannels, bits, oneBit);
        return new PackedBlock(packPerToken(cpu.unpackPerToken(b.codes(), tokens, channels, groupChannels, bits), tokens, channels,
                groupChannels, bits), b.meta());
    }

    @Override
    public double[] dequantizePerChannel(PackedBlock block, int tokens, int[] bits) {
        return cpu.dequantizePerChannel(new PackedBlock(cpu.packPerChannel(unpackPerChannel(block.codes(), tokens, bits), tokens, bits),
                block.meta()), tokens, bits);
    }

    @Override
    public double[] dequantizePerToken(PackedBlock block, int tokens, int channels, int groupChannels, int bits) {
        return cpu.dequantizePerToken(new PackedBlock(cpu.packPerToken(unpackPerToken(block.codes(), tokens, channels, groupChannels, bits),
                tokens, channels, groupChannels, bits), block.meta()), tokens, channels, groupChannels, bits);
    }

    PackedKvCache twinLayout(PackedKvCache cache) {
        return PnMixKernelChecks.inMechspecLayout(cache, this);
    }

    @Override
    public PackedAttention attend(PackedKvCache cache, double[] q, int queryHeads, int queryLen, boolean causal, boolean withLogits) {
        return cpu.attend(twinLayout(cache), q, queryHeads, queryLen, causal, withLogits);
    }

    @Override
    public float[] attendFp32(PackedKvCache cache, float[] q, int queryHeads, int queryLen, boolean causal) {
        return cpu.attendFp32(twinLayout(cache), q, queryHeads, queryLen, causal);
    }

    @Override
    public double[] decode(PackedKvCache cache, double[] q, int queryHeads) {
        return cpu.decode(twinLayout(cache), q, queryHeads);
    }

    @Override
    public float[] decodeFp32(PackedKvCache cache, float[] q, int queryHeads) {
        return cpu.decodeFp32(twinLayout(cache), q, queryHeads);
    }
}
