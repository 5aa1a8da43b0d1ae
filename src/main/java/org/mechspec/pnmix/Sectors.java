package org.mechspec.pnmix;

import java.util.BitSet;

/**
 * The 32-byte sectors of one device buffer that a kernel's accesses touch, each counted once however often it is
 * read: the unit in which the GPU moves data between DRAM, L2 and the SMs. The buffer starts on a sector boundary
 * (cuMemAlloc aligns to at least 256 bytes), so byte b lies in sector b / 32.
 */
final class Sectors {
    static final int BYTES = 32;

    private final BitSet touched = new BitSet();

    /** Bytes [offset, offset + bytes). */
    Sectors touch(long offset, long bytes) {
        if (bytes > 0) {
            touched.set(index(offset), index(offset + bytes - 1) + 1);
        }
        return this;
    }

    /** {@code count} runs of {@code runBytes} bytes, {@code stride} bytes apart, the first at {@code offset}. */
    Sectors touchStrided(long offset, long runBytes, long stride, long count) {
        for (long i = 0; i < count; i++) {
            touch(offset + i * stride, runBytes);
        }
        return this;
    }

    /** Distinct sectors touched. */
    long count() {
        return touched.cardinality();
    }

    /** Their bytes: what moves for them, used or not. */
    long bytes() {
        return count() * BYTES;
    }

    private static int index(long byteOffset) {
        long i = byteOffset / BYTES;
        if (byteOffset < 0 || i > Integer.MAX_VALUE - 1) {
            throw new IllegalArgumentException("byte offset " + byteOffset + " is outside what a sector set covers");
        }
        return (int) i;
    }
}
