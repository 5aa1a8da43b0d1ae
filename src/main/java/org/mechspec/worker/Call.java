package org.mechspec.worker;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One call of a worker operation: its input tensors and parameters, and the outputs it must return (name, dtype,
 * shape; −1 for a dimension the implementation chooses). {@link #run()} checks every reply before a check sees it:
 * names (none missing, none extra), dtypes, shapes and finite values, each violation one line naming the operation,
 * the tensor and the first bad index.
 */
public final class Call {
    private record Expected(WireTensor.Dtype dtype, long[] shape, boolean finite) {
    }

    private final Implementation implementation;
    final String op;
    final String precision;
    final Map<String, WireTensor> inputs = new LinkedHashMap<>();
    final Map<String, Object> params = new LinkedHashMap<>();
    private final Map<String, Expected> outputs = new LinkedHashMap<>();

    Call(Implementation implementation, String op, String precision) {
        this.implementation = implementation;
        this.op = op;
        this.precision = precision;
    }

    /** Adds input tensor {@code name}. */
    public Call input(String name, WireTensor t) {
        inputs.put(name, t);
        return this;
    }

    /** Adds an f64 input of the given shape. */
    public Call input(String name, double[] x, long... shape) {
        return input(name, WireTensor.of(x, shape));
    }

    /** Adds an f64 input of shape [rows, columns] from its rows, which must all be as long as the first. */
    public Call input(String name, double[][] rows) {
        int columns = rows.length == 0 ? 0 : rows[0].length;
        double[] flat = new double[rows.length * columns];
        for (int r = 0; r < rows.length; r++) {
            if (rows[r].length != columns) {
                throw new IllegalArgumentException(op + ": input '" + name + "' row " + r + " has " + rows[r].length
                        + " numbers, row 0 has " + columns);
            }
            System.arraycopy(rows[r], 0, flat, r * columns, columns);
        }
        return input(name, flat, rows.length, columns);
    }

    /** Adds an f32 input of the given shape. */
    public Call input(String name, float[] x, long... shape) {
        return input(name, WireTensor.of(x, shape));
    }

    /** Adds an i32 input of the given shape. */
    public Call input(String name, int[] x, long... shape) {
        return input(name, WireTensor.of(x, shape));
    }

    /** Adds a u8 input (one dimension). */
    public Call input(String name, byte[] x) {
        return input(name, WireTensor.of(x));
    }

    /** Adds a JSON parameter (a number, string or boolean). */
    public Call param(String name, Object value) {
        params.put(name, value instanceof Enum<?> e ? e.name().toLowerCase(java.util.Locale.ROOT) : value);
        return this;
    }

    /** An output that must be finite. */
    public Call output(String name, WireTensor.Dtype dtype, long... shape) {
        outputs.put(name, new Expected(dtype, shape, true));
        return this;
    }

    /** An output that may hold ±inf or NaN (a rounding's overflow, a masked logit). */
    public Call outputAnyValue(String name, WireTensor.Dtype dtype, long... shape) {
        outputs.put(name, new Expected(dtype, shape, false));
        return this;
    }

    /**
     * The most bytes an outputs file of this call may hold: the declared outputs' sizes, an implementation-chosen
     * dimension counted as large as all the inputs together (a packed stream or code block never outgrows what it
     * encodes), plus 1 MiB of header. A larger file (a link to /dev/zero, a sparse file) is refused unread.
     */
    long maxOutputBytes() {
        long inputBytes = 0;
        for (WireTensor t : inputs.values()) {
            inputBytes += t.data().length;
        }
        long total = 1 << 20;
        for (Expected x : outputs.values()) {
            long elements = 1;
            boolean chosen = false;
            for (long d : x.shape()) {
                chosen |= d < 0;
                elements = d < 0 ? elements : Math.multiplyExact(elements, d);
            }
            total += chosen ? inputBytes + elements * x.dtype().bytes : elements * x.dtype().bytes;
        }
        return total;
    }

    /** The floating-point output dtype of this call's precision. */
    public WireTensor.Dtype floats() {
        return precision.equals(Operations.F32) ? WireTensor.Dtype.F32 : WireTensor.Dtype.F64;
    }

    /** The call, counted for the invocation's verdict ({@link Usage}): an answer, or a failure. */
    public Reply run() {
        try {
            Reply reply = checked(implementation.exchange(this));
            implementation.counted(op, true);
            return reply;
        } catch (IllegalArgumentException e) { // invalid_argument: the refusal mechspec's own code would give, which checks judge
            implementation.counted(op, true);
            throw e;
        } catch (WorkerException e) {
            // OAL's runtime guard and fold-bias's singular system are answers too; anything else is a failure of the call.
            implementation.counted(op, e.type().equals("non_positive_denominator") || e.type().equals("singular"));
            throw e;
        } catch (RuntimeException e) {
            implementation.counted(op, false);
            throw e;
        }
    }

    private Reply checked(Map<String, WireTensor> got) {
        String where = "worker " + implementation.id() + ": " + op + " (" + precision + ")";
        for (String name : got.keySet()) {
            if (!outputs.containsKey(name)) {
                throw new WorkerException("protocol", where + ": unexpected output '" + name + "' (expected " + outputs.keySet() + ")");
            }
        }
        for (Map.Entry<String, Expected> e : outputs.entrySet()) {
            String name = e.getKey();
            Expected x = e.getValue();
            WireTensor t = got.get(name);
            if (t == null) {
                throw new WorkerException("protocol", where + ": output '" + name + "' missing (got " + got.keySet() + ")");
            }
            if (t.dtype() != x.dtype()) {
                throw new WorkerException("protocol", where + ": output '" + name + "' has dtype " + t.dtype() + ", expected " + x.dtype());
            }
            if (!fits(t.shape(), x.shape())) {
                throw new WorkerException("protocol", where + ": output '" + name + "' has shape " + Arrays.toString(t.shape())
                        + ", expected " + Arrays.toString(x.shape()).replace("-1", "any"));
            }
            int bad = x.finite() ? t.firstNonFinite() : -1;
            if (bad >= 0) {
                throw new WorkerException("protocol", where + ": output '" + name + "' is not finite at index " + bad + " ("
                        + t.element(bad) + ")");
            }
        }
        return new Reply(got);
    }

    private static boolean fits(long[] shape, long[] expected) {
        if (shape.length != expected.length) {
            return false;
        }
        for (int i = 0; i < shape.length; i++) {
            if (expected[i] >= 0 && expected[i] != shape[i]) {
                return false;
            }
        }
        return true;
    }

    /** The checked outputs of a call. */
    public static final class Reply {
        private final Map<String, WireTensor> tensors;

        Reply(Map<String, WireTensor> tensors) {
            this.tensors = tensors;
        }

        /** The output {@code name} as sent. */
        public WireTensor tensor(String name) {
            return tensors.get(name);
        }

        /** The f64 output {@code name}. */
        public double[] f64(String name) {
            return tensors.get(name).f64();
        }

        /** The f64 output {@code name}, two-dimensional, as its rows. */
        public double[][] f64Rows(String name) {
            double[] flat = f64(name);
            int[] shape = matrixShape(name);
            double[][] rows = new double[shape[0]][];
            for (int r = 0; r < rows.length; r++) {
                rows[r] = Arrays.copyOfRange(flat, r * shape[1], (r + 1) * shape[1]);
            }
            return rows;
        }

        /** The i32 output {@code name}, two-dimensional, as its rows. */
        public int[][] i32Rows(String name) {
            int[] flat = i32(name);
            int[] shape = matrixShape(name);
            int[][] rows = new int[shape[0]][];
            for (int r = 0; r < rows.length; r++) {
                rows[r] = Arrays.copyOfRange(flat, r * shape[1], (r + 1) * shape[1]);
            }
            return rows;
        }

        private int[] matrixShape(String name) {
            long[] shape = tensors.get(name).shape();
            if (shape.length != 2) {
                throw new IllegalArgumentException("output '" + name + "' has shape " + Arrays.toString(shape) + ", not two dimensions");
            }
            return new int[] {Math.toIntExact(shape[0]), Math.toIntExact(shape[1])};
        }

        /** The f32 output {@code name}. */
        public float[] f32(String name) {
            return tensors.get(name).f32();
        }

        /** The i32 output {@code name}. */
        public int[] i32(String name) {
            return tensors.get(name).i32();
        }

        /** The i64 output {@code name}. */
        public long[] i64(String name) {
            return tensors.get(name).i64();
        }

        /** The u8 output {@code name}. */
        public byte[] u8(String name) {
            return tensors.get(name).u8();
        }
    }
}
