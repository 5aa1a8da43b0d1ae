package org.mechspec.pnmix;

import java.util.Arrays;

/**
 * Which RoPE pairs of each KV head are high precision. Stored as a bit field, bit h·pairs + p, LSB-first in
 * ⌈kvHeads·pairs/8⌉ bytes: 2 heads × 16 pairs = a 32-bit mask, 4 bytes.
 */
public final class PairMask {
    private final int kvHeads;
    private final int pairs;
    private final byte[] bits;

    private PairMask(int kvHeads, int pairs, byte[] bits) {
        this.kvHeads = kvHeads;
        this.pairs = pairs;
        this.bits = bits;
    }

    /** A mask with {@code high[h·pairs + p]} set for the high pairs. */
    public static PairMask of(int kvHeads, int pairs, boolean[] high) {
        if (high.length != kvHeads * pairs) {
            throw new IllegalArgumentException("mask needs " + kvHeads * pairs + " flags, got " + high.length);
        }
        byte[] b = new byte[(kvHeads * pairs + 7) / 8];
        for (int i = 0; i < high.length; i++) {
            if (high[i]) {
                b[i >>> 3] |= (byte) (1 << (i & 7));
            }
        }
        return new PairMask(kvHeads, pairs, b);
    }

    public boolean high(int kvHead, int pair) {
        int i = kvHead * pairs + pair;
        return (bits[i >>> 3] & (1 << (i & 7))) != 0;
    }

    public int highCount(int kvHead) {
        int n = 0;
        for (int p = 0; p < pairs; p++) {
            n += high(kvHead, p) ? 1 : 0;
        }
        return n;
    }

    public int kvHeads() {
        return kvHeads;
    }

    public int pairs() {
        return pairs;
    }

    /** A copy of the stored bytes. */
    public byte[] bytes() {
        return bits.clone();
    }

    public int byteLength() {
        return bits.length;
    }

    /** The mask as an unsigned number (bit i = flag i), for the artifact; up to 63 flags. */
    public long asLong() {
        long v = 0;
        for (int i = 0; i < Math.min(bits.length, 8); i++) {
            v |= (long) (bits[i] & 0xFF) << (8 * i);
        }
        return v;
    }

    /** Key bit width of every channel (kvHead·headDim + dim) under a pair layout. */
    public int[] channelBits(int headDim, PairLayout layout, int highBits, int lowBits) {
        if (headDim / 2 != pairs) {
            throw new IllegalArgumentException("a mask of " + pairs + " pairs per head does not fit headDim " + headDim);
        }
        int[] out = new int[kvHeads * headDim];
        for (int h = 0; h < kvHeads; h++) {
            for (int c = 0; c < headDim; c++) {
                out[h * headDim + c] = high(h, layout.pairOf(c, headDim)) ? highBits : lowBits;
            }
        }
        return out;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PairMask m && m.kvHeads == kvHeads && m.pairs == pairs && Arrays.equals(m.bits, bits);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bits);
    }

    @Override
    public String toString() {
        return "PairMask(0x" + Long.toHexString(asLong()) + ")";
    }
}
