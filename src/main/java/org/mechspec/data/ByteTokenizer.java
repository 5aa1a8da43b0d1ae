package org.mechspec.data;

/** Byte-level tokenizer: every byte is its own token, so the vocabulary is the 256 byte values. */
public final class ByteTokenizer {
    /** One token per byte value. */
    public static final int VOCAB_SIZE = 256;

    private ByteTokenizer() {
    }

    /** Token ids 0..255 of {@code length} bytes starting at {@code offset}. */
    public static int[] encode(byte[] bytes, int offset, int length) {
        if (offset < 0 || length < 0 || offset + length > bytes.length) {
            throw new IllegalArgumentException("range [" + offset + ", " + (offset + length) + ") is outside "
                    + bytes.length + " bytes");
        }
        int[] tokens = new int[length];
        for (int i = 0; i < length; i++) {
            tokens[i] = bytes[offset + i] & 0xFF;
        }
        return tokens;
    }

    /** One token per byte: its unsigned value. */
    public static int[] encode(byte[] bytes) {
        return encode(bytes, 0, bytes.length);
    }

    /** The bytes the tokens stand for. */
    public static byte[] decode(int[] tokens) {
        byte[] bytes = new byte[tokens.length];
        for (int i = 0; i < tokens.length; i++) {
            if (tokens[i] < 0 || tokens[i] >= VOCAB_SIZE) {
                throw new IllegalArgumentException("token " + tokens[i] + " at " + i + " is not a byte");
            }
            bytes[i] = (byte) tokens[i];
        }
        return bytes;
    }
}
