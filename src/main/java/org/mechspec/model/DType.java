package org.mechspec.model;

import java.nio.ByteBuffer;
import org.mechspec.compute.HalfFloat;

/** safetensors element types this project reads and writes (little-endian). */
public enum DType {
    F64(8),
    F32(4),
    F16(2),
    BF16(2);

    private final int bytes;

    DType(int bytes) {
        this.bytes = bytes;
    }

    public int bytes() {
        return bytes;
    }

    /** The dtype named in a safetensors header, or null when unsupported. */
    public static DType parse(String name) {
        for (DType d : values()) {
            if (d.name().equals(name)) {
                return d;
            }
        }
        return null;
    }

    /** Reads the element at the buffer's position as a double (exact for every type). */
    double read(ByteBuffer b) {
        return switch (this) {
            case F64 -> b.getDouble();
            case F32 -> b.getFloat();
            case F16 -> HalfFloat.fromHalfBits(b.getShort());
            case BF16 -> HalfFloat.fromBfloat16Bits(b.getShort());
        };
    }

    /** Writes v rounded to this type (nearest, ties to even). */
    void write(ByteBuffer b, double v) {
        switch (this) {
            case F64 -> b.putDouble(v);
            case F32 -> b.putFloat((float) v);
            case F16 -> b.putShort(HalfFloat.toHalfBits(v));
            case BF16 -> b.putShort(HalfFloat.toBfloat16Bits(v));
        }
    }
}
