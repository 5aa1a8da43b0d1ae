package org.mechspec.model;

import java.util.Arrays;

/**
 * A dense row-major array of fp32 or fp64 numbers with a shape. Kernels are written once against
 * {@link #get}/{@link #set}/{@link #add} in double; an fp32 tensor rounds to float on every store, so the same
 * kernel runs in both precisions. Matmuls reach the primitive arrays through {@link F32#data} / {@link F64#data}.
 */
public abstract sealed class Tensor permits Tensor.F32, Tensor.F64 {
    private final int[] shape;
    private final int size;

    private Tensor(int[] shape) {
        this.shape = shape.clone();
        long n = 1;
        for (int d : shape) {
            if (d < 0) {
                throw new IllegalArgumentException("negative dimension in shape " + Arrays.toString(shape));
            }
            n *= d;
        }
        if (n > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("shape " + Arrays.toString(shape) + " has too many elements");
        }
        this.size = (int) n;
    }

    public static Tensor zeros(Precision precision, int... shape) {
        return precision == Precision.FP32 ? new F32(shape) : new F64(shape);
    }

    /** A tensor holding {@code values} (rounded to fp32 when asked). */
    public static Tensor of(Precision precision, double[] values, int... shape) {
        Tensor t = zeros(precision, shape);
        if (values.length != t.size) {
            throw new IllegalArgumentException(values.length + " values for shape " + Arrays.toString(shape));
        }
        for (int i = 0; i < values.length; i++) {
            t.set(i, values[i]);
        }
        return t;
    }

    public abstract Precision precision();

    public abstract double get(int i);

    /** this[i] ← v (rounded to the storage precision). */
    public abstract void set(int i, double v);

    /** this[i] ← this[i] + v, rounded once. */
    public abstract void add(int i, double v);

    public abstract Tensor copy();

    /** Copies every element of {@code other} (same size, any precision). */
    public abstract void copyFrom(Tensor other);

    public abstract void fill(double v);

    /** True when both tensors have the same precision, shape and bit patterns. */
    public abstract boolean bitEquals(Tensor other);

    public final int size() {
        return size;
    }

    public final int[] shape() {
        return shape.clone();
    }

    public final int dim(int axis) {
        return shape[axis];
    }

    public final boolean hasShape(int... expected) {
        return Arrays.equals(shape, expected);
    }

    public final double[] toDoubles() {
        double[] out = new double[size];
        for (int i = 0; i < size; i++) {
            out[i] = get(i);
        }
        return out;
    }

    /** Index of the first non-finite element, or −1. */
    public final int firstNonFinite() {
        for (int i = 0; i < size; i++) {
            if (!Double.isFinite(get(i))) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public String toString() {
        return precision() + Arrays.toString(shape);
    }

    /** fp32 storage. */
    public static final class F32 extends Tensor {
        public final float[] data;

        F32(int[] shape) {
            super(shape);
            this.data = new float[size()];
        }

        @Override
        public Precision precision() {
            return Precision.FP32;
        }

        @Override
        public double get(int i) {
            return data[i];
        }

        @Override
        public void set(int i, double v) {
            data[i] = (float) v;
        }

        @Override
        public void add(int i, double v) {
            data[i] = (float) (data[i] + v);
        }

        @Override
        public Tensor copy() {
            F32 t = new F32(shape());
            System.arraycopy(data, 0, t.data, 0, data.length);
            return t;
        }

        @Override
        public void copyFrom(Tensor other) {
            requireSameSize(other);
            if (other instanceof F32 f) {
                System.arraycopy(f.data, 0, data, 0, data.length);
            } else {
                for (int i = 0; i < data.length; i++) {
                    data[i] = (float) other.get(i);
                }
            }
        }

        @Override
        public void fill(double v) {
            Arrays.fill(data, (float) v);
        }

        @Override
        public boolean bitEquals(Tensor other) {
            return other instanceof F32 f && f.hasShape(shape()) && Arrays.equals(data, f.data);
        }
    }

    /** fp64 storage. */
    public static final class F64 extends Tensor {
        public final double[] data;

        F64(int[] shape) {
            super(shape);
            this.data = new double[size()];
        }

        @Override
        public Precision precision() {
            return Precision.FP64;
        }

        @Override
        public double get(int i) {
            return data[i];
        }

        @Override
        public void set(int i, double v) {
            data[i] = v;
        }

        @Override
        public void add(int i, double v) {
            data[i] += v;
        }

        @Override
        public Tensor copy() {
            F64 t = new F64(shape());
            System.arraycopy(data, 0, t.data, 0, data.length);
            return t;
        }

        @Override
        public void copyFrom(Tensor other) {
            requireSameSize(other);
            for (int i = 0; i < data.length; i++) {
                data[i] = other.get(i);
            }
        }

        @Override
        public void fill(double v) {
            Arrays.fill(data, v);
        }

        @Override
        public boolean bitEquals(Tensor other) {
            // Arrays.equals on double[] compares bit patterns (doubleToLongBits), so -0.0 != 0.0 here.
            return other instanceof F64 f && f.hasShape(shape()) && Arrays.equals(data, f.data);
        }
    }

    final void requireSameSize(Tensor other) {
        if (other.size != size) {
            throw new IllegalArgumentException("size mismatch: " + other + " into " + this);
        }
    }
}
