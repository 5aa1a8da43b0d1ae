package org.mechspec.compute;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * The table of contents of an nvcc fatbin: which SASS (ELF) and PTX images it holds, for which architecture.
 * The driver does not say which image it loaded; {@link #imageFor} applies its rule (SASS of the same major
 * version and the highest minor not above the device's, else PTX of an architecture not above it, JIT-compiled).
 */
public record FatBinary(List<Image> images) {
    private static final int MAGIC = 0xBA55ED50;
    private static final int PTX = 1;
    private static final int ELF = 2;

    /** One image: sm (e.g. 90) and, for PTX, the ISA version (e.g. 9.0). */
    public record Image(boolean ptx, int sm, String ptxIsa) {
        /** One line naming the architectures and PTX the image carries. */
        public String describe() {
            return ptx ? "compute_" + sm + " PTX (ISA " + ptxIsa + "), JIT-compiled by the driver" : "sm_" + sm + " SASS";
        }
    }

    /** Whether {@code data} starts with the fatbin magic number. */
    public static boolean isFatBinary(byte[] data) {
        return data.length >= 16 && ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN).getInt(0) == MAGIC;
    }

    /** The entries of a fatbin image; an {@link IllegalArgumentException} for a malformed one. */
    public static FatBinary parse(byte[] data) {
        if (!isFatBinary(data)) {
            throw new IllegalArgumentException("not an nvcc fatbin (magic 0xBA55ED50 missing)");
        }
        ByteBuffer b = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
        long end = Math.min(data.length, 16 + b.getLong(8));
        List<Image> out = new ArrayList<>();
        long at = b.getShort(6) & 0xFFFF;
        while (at + 32 <= end) {
            int p = (int) at;
            int kind = b.getShort(p) & 0xFFFF;
            long header = b.getInt(p + 4) & 0xFFFFFFFFL;
            long payload = b.getLong(p + 8);
            int minor = b.getShort(p + 0x18) & 0xFFFF;
            int major = b.getShort(p + 0x1A) & 0xFFFF;
            int sm = b.getInt(p + 0x1C);
            if (header < 32 || payload < 0) {
                throw new IllegalArgumentException("corrupt fatbin entry at byte " + p);
            }
            if (kind == PTX || kind == ELF) {
                out.add(new Image(kind == PTX, sm, kind == PTX ? major + "." + minor : ""));
            }
            at += header + payload;
        }
        return new FatBinary(List.copyOf(out));
    }

    /** The image a driver runs on compute capability major.minor, or null when none fits. */
    public Image imageFor(int major, int minor) {
        int device = 10 * major + minor;
        Image best = null;
        for (Image i : images) {
            if (!i.ptx() && i.sm() / 10 == major && i.sm() <= device && (best == null || i.sm() > best.sm())) {
                best = i;
            }
        }
        if (best != null) {
            return best;
        }
        for (Image i : images) {
            if (i.ptx() && i.sm() <= device && (best == null || i.sm() > best.sm())) {
                best = i;
            }
        }
        return best;
    }
}
