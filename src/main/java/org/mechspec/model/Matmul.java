package org.mechspec.model;

/**
 * Dense products for the model. One form only, C[m,n] += A[m,k]·B[k,n] with all three row-major, in i-k-j
 * order: the inner loop runs along contiguous rows of B and C (vectorizes, no strided access). Callers that
 * need a transposed operand transpose it first ({@link #transpose}), which costs one pass over it.
 * Each C element is summed over k in increasing order, so results do not depend on the thread count.
 */
public final class Matmul {
    private Matmul() {
    }

    /** c[m,n] += a[m,k]·b[k,n]; all tensors share one precision. */
    public static void accumulate(Tensor c, Tensor a, Tensor b, int m, int k, int n) {
        if (a.size() != m * k || b.size() != k * n || c.size() != m * n) {
            throw new IllegalArgumentException("matmul sizes: a " + a + ", b " + b + ", c " + c + " for m=" + m
                    + " k=" + k + " n=" + n);
        }
        if (c instanceof Tensor.F32 cf && a instanceof Tensor.F32 af && b instanceof Tensor.F32 bf) {
            Parallel.rows(m, 2L * m * k * n, (start, end) -> accumulate(cf.data, af.data, bf.data, k, n, start, end));
        } else if (c instanceof Tensor.F64 cd && a instanceof Tensor.F64 ad && b instanceof Tensor.F64 bd) {
            Parallel.rows(m, 2L * m * k * n, (start, end) -> accumulate(cd.data, ad.data, bd.data, k, n, start, end));
        } else {
            throw new IllegalArgumentException("matmul of mixed precisions: " + c + ", " + a + ", " + b);
        }
    }

    /**
     * Rows [start, end) of c += a·b, fp32, register-blocked: four rows of c share each pass over four rows of b.
     * Java evaluates {@code c + a0·b0 + a1·b1 + …} left to right, so every element's sum runs over k in plain
     * increasing order, exactly as the textbook loop.
     */
    static void accumulate(float[] c, float[] a, float[] b, int k, int n, int start, int end) {
        int i = start;
        for (; i + 3 < end; i += 4) {
            accumulateFourRows(c, a, b, k, n, i);
        }
        for (; i < end; i++) {
            accumulateRow(c, a, b, k, n, i);
        }
    }

    private static void accumulateFourRows(float[] c, float[] a, float[] b, int k, int n, int i) {
        int c0 = i * n;
        int c1 = c0 + n;
        int c2 = c1 + n;
        int c3 = c2 + n;
        int r0 = i * k;
        int r1 = r0 + k;
        int r2 = r1 + k;
        int r3 = r2 + k;
        int p = 0;
        for (; p + 3 < k; p += 4) {
            float x0 = a[r0 + p], x1 = a[r0 + p + 1], x2 = a[r0 + p + 2], x3 = a[r0 + p + 3];
            float y0 = a[r1 + p], y1 = a[r1 + p + 1], y2 = a[r1 + p + 2], y3 = a[r1 + p + 3];
            float z0 = a[r2 + p], z1 = a[r2 + p + 1], z2 = a[r2 + p + 2], z3 = a[r2 + p + 3];
            float w0 = a[r3 + p], w1 = a[r3 + p + 1], w2 = a[r3 + p + 2], w3 = a[r3 + p + 3];
            int b0 = p * n;
            int b1 = b0 + n;
            int b2 = b1 + n;
            int b3 = b2 + n;
            for (int j = 0; j < n; j++) {
                float q0 = b[b0 + j], q1 = b[b1 + j], q2 = b[b2 + j], q3 = b[b3 + j];
                c[c0 + j] = c[c0 + j] + x0 * q0 + x1 * q1 + x2 * q2 + x3 * q3;
                c[c1 + j] = c[c1 + j] + y0 * q0 + y1 * q1 + y2 * q2 + y3 * q3;
                c[c2 + j] = c[c2 + j] + z0 * q0 + z1 * q1 + z2 * q2 + z3 * q3;
                c[c3 + j] = c[c3 + j] + w0 * q0 + w1 * q1 + w2 * q2 + w3 * q3;
            }
        }
        for (; p < k; p++) {
            float x = a[r0 + p], y = a[r1 + p], z = a[r2 + p], w = a[r3 + p];
            int bRow = p * n;
            for (int j = 0; j < n; j++) {
                float q = b[bRow + j];
                c[c0 + j] += x * q;
                c[c1 + j] += y * q;
                c[c2 + j] += z * q;
                c[c3 + j] += w * q;
            }
        }
    }

    private static void accumulateRow(float[] c, float[] a, float[] b, int k, int n, int i) {
        int cRow = i * n;
        int aRow = i * k;
        for (int p = 0; p < k; p++) {
            float ap = a[aRow + p];
            int bRow = p * n;
            for (int j = 0; j < n; j++) {
                c[cRow + j] += ap * b[bRow + j];
            }
        }
    }

    /** The fp64 twin (plain i-k-j: fp64 runs only in checks, where speed does not matter). */
    static void accumulate(double[] c, double[] a, double[] b, int k, int n, int start, int end) {
        for (int i = start; i < end; i++) {
            int cRow = i * n;
            int aRow = i * k;
            for (int p = 0; p < k; p++) {
                double ap = a[aRow + p];
                int bRow = p * n;
                for (int j = 0; j < n; j++) {
                    c[cRow + j] += ap * b[bRow + j];
                }
            }
        }
    }

    /** The textbook i-j-k triple loop (strided reads of B), fp32: the baseline of the benchmark. */
    public static void naive(float[] c, float[] a, float[] b, int m, int k, int n) {
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                float sum = c[i * n + j];
                for (int p = 0; p < k; p++) {
                    sum += a[i * k + p] * b[p * n + j];
                }
                c[i * n + j] = sum;
            }
        }
    }

    /** The [cols, rows] transpose of a row-major [rows, cols] tensor. */
    public static Tensor transpose(Tensor a, int rows, int cols) {
        if (a.size() != rows * cols) {
            throw new IllegalArgumentException("transpose of " + a + " as " + rows + "x" + cols);
        }
        Tensor t = Tensor.zeros(a.precision(), cols, rows);
        if (a instanceof Tensor.F32 af && t instanceof Tensor.F32 tf) {
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < cols; c++) {
                    tf.data[c * rows + r] = af.data[r * cols + c];
                }
            }
        } else {
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < cols; c++) {
                    t.set(c * rows + r, a.get(r * cols + c));
                }
            }
        }
        return t;
    }
}
