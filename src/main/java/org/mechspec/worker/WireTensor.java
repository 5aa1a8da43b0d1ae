package org.mechspec.worker;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * One tensor as it crosses to a worker: a safetensors dtype, a shape and its little-endian bytes, row-major. Only the
 * dtypes the operations use ({@code PROTOCOL.md}).
 */
public record WireTensor(Dtype dtype, long[] shape, byte[] data) {
    /** The dtypes of the protocol, by their safetensors names. */
    public enum Dtype {
        /** 8-byte IEEE doubles. */
        F64(8),
        /** 4-byte IEEE floats. */
        F32(4),
        /** 8-byte signed integers. */
        I64(8),
        /** 4-byte signed integers. */
        I32(4),
        /** Unsigned bytes. */
        U8(1);

        final int bytes;

        Dtype(int bytes) {
            this.bytes = bytes;
        }
    }

    /** Checks that the data holds exactly the shape's elements of the dtype. */
    public WireTensor {
        long n = elements(shape);
        if (n * dtype.bytes != data.length) {
            throw new IllegalArgumentException(dtype + " tensor of shape " + Arrays.toString(shape) + " needs "
                    + n * dtype.bytes + " bytes, got " + data.length);
        }
    }

    static long elements(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }

    /** How many elements the shape holds. */
    public long elements() {
        return elements(shape);
    }

    private static ByteBuffer buffer(int elements, Dtype dtype) {
        return ByteBuffer.allocate(elements * dtype.bytes).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** An f64 tensor of the given shape. */
    public static WireTensor of(double[] x, long... shape) {
        ByteBuffer b = buffer(x.length, Dtype.F64);
        b.asDoubleBuffer().put(x);
        return new WireTensor(Dtype.F64, shape, b.array());
    }

    /** An f32 tensor of the given shape. */
    public static WireTensor of(float[] x, long... shape) {
        ByteBuffer b = buffer(x.length, Dtype.F32);
        b.asFloatBuffer().put(x);
        return new WireTensor(Dtype.F32, shape, b.array());
    }

    /** An i32 tensor of the given shape. */
    public static WireTensor of(int[] x, long... shape) {
        ByteBuffer b = buffer(x.length, Dtype.I32);
        b.asIntBuffer().put(x);
        return new WireTensor(Dtype.I32, shape, b.array());
    }

    /** An i64 tensor of the given shape. */
    public static WireTensor of(long[] x, long... shape) {
        ByteBuffer b = buffer(x.length, Dtype.I64);
        b.asLongBuffer().put(x);
        return new WireTensor(Dtype.I64, shape, b.array());
    }

    /** A u8 tensor of one dimension. */
    public static WireTensor of(byte[] x) {
        return new WireTensor(Dtype.U8, new long[] {x.length}, x.clone());
    }

    private ByteBuffer little() {
        return ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** The data as doubles (an f64 tensor). */
    public double[] f64() {
        double[] x = new double[(int) elements()];
        little().asDoubleBuffer().get(x);
        return x;
    }

    /** The data as floats (an f32 tensor). */
    public float[] f32() {
        float[] x = new float[(int) elements()];
        little().asFloatBuffer().get(x);
        return x;
    }

    /** The data as ints (an i32 tensor). */
    public int[] i32() {
        int[] x = new int[(int) elements()];
        little().asIntBuffer().get(x);
        return x;
    }

    /** The data as longs (an i64 tensor). */
    public long[] i64() {
        long[] x = new long[(int) elements()];
        little().asLongBuffer().get(x);
        return x;
    }

    /** The data as unsigned bytes. */
    public byte[] u8() {
        return data.clone();
    }

    /** The first element that is NaN or infinite, or −1 (integer tensors have none). */
    int firstNonFinite() {
        ByteBuffer b = little();
        for (int i = 0; i < elements(); i++) {
            boolean finite = switch (dtype) {
                case F64 -> Double.isFinite(b.getDouble(8 * i));
                case F32 -> Float.isFinite(b.getFloat(4 * i));
                default -> true;
            };
            if (!finite) {
                return i;
            }
        }
        return -1;
    }

    /** Element {@code i} as text, for an error line. */
    String element(int i) {
        ByteBuffer b = little();
        return switch (dtype) {
            case F64 -> String.valueOf(b.getDouble(8 * i));
            case F32 -> String.valueOf(b.getFloat(4 * i));
            case I64 -> String.valueOf(b.getLong(8 * i));
            case I32 -> String.valueOf(b.getInt(4 * i));
            case U8 -> String.valueOf(b.get(i) & 0xff);
        };
    }
}
