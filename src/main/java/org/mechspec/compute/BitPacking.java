package org.mechspec.compute;

/**
 * The bit layout of packed codes, shared by the CPU twin and {@code pnmix.cu}. A stream of {@code count}
 * codes of {@code bits} bits puts code i at bits [i·bits, (i+1)·bits) counted LSB-first from the stream's
 * first byte, so a code may straddle two bytes; a stream is padded with zero bits to a whole byte.
 * Per-channel blocks hold one stream per channel (channel-major); per-token blocks hold one stream per
 * (token, channel group), token-major.
 */
public final class BitPacking {
    private BitPacking() {
    }

    /** Refuses a bit width outside 1-8, naming {@code what}. */
    public static void requireBits(String what, int bits) {
        if (bits < 1 || bits > 8) {
            throw new IllegalArgumentException(what + " must be 1..8 bits, got " + bits);
        }
    }

    /** Bytes of one stream of {@code count} codes. */
    public static int streamBytes(int count, int bits) {
        requireBits("code width", bits);
        return (int) (((long) count * bits + 7) / 8);
    }

    /** Byte offset of each channel's stream in a per-channel block, plus the total at index channels. */
    public static int[] channelOffsets(int tokens, int[] bits) {
        int[] off = new int[bits.length + 1];
        for (int c = 0; c < bits.length; c++) {
            off[c + 1] = off[c] + streamBytes(tokens, bits[c]);
        }
        return off;
    }

    /** Bytes of one (token, channel group) stream in a per-token block. */
    public static int tokenGroupBytes(int groupChannels, int bits) {
        return streamBytes(groupChannels, bits);
    }

    /** Checks that a per-token block's channels split into whole groups. */
    public static int groupsPerToken(int channels, int groupChannels) {
        if (groupChannels <= 0 || channels <= 0 || channels % groupChannels != 0) {
            throw new IllegalArgumentException("value group of " + groupChannels + " channels does not divide "
                    + channels + " channels");
        }
        return channels / groupChannels;
    }

    /** Writes {@code code} at position {@code index} of the stream starting at {@code byteOffset}. */
    public static void put(byte[] out, int byteOffset, int index, int bits, int code) {
        if (code < 0 || code >= (1 << bits)) {
            throw new IllegalArgumentException("code " + code + " does not fit in " + bits + " bits");
        }
        long bit = (long) index * bits;
        int at = byteOffset + (int) (bit >>> 3);
        int shift = (int) (bit & 7);
        int word = code << shift;
        out[at] |= (byte) word;
        if (shift + bits > 8) {
            out[at + 1] |= (byte) (word >>> 8);
        }
    }

    /** Reads the code at position {@code index} of the stream starting at {@code byteOffset}. */
    public static int get(byte[] in, int byteOffset, int index, int bits) {
        long bit = (long) index * bits;
        int at = byteOffset + (int) (bit >>> 3);
        int shift = (int) (bit & 7);
        int word = in[at] & 0xFF;
        if (shift + bits > 8) {
            word |= (in[at + 1] & 0xFF) << 8;
        }
        return (word >>> shift) & ((1 << bits) - 1);
    }

    /** fp16 bits, little-endian, at {@code offset}. */
    public static short getHalf(byte[] in, int offset) {
        return (short) ((in[offset] & 0xFF) | (in[offset + 1] << 8));
    }

    /** Writes the fp16 bits {@code h} little-endian at {@code offset}. */
    public static void putHalf(byte[] out, int offset, short h) {
        out[offset] = (byte) h;
        out[offset + 1] = (byte) (h >>> 8);
    }
}
