package org.mechspec.model;

/**
 * Dense products for the model. One form only, C[m,n] += A[m,k]·B[k,n] with all three row-major, in i-k-j
 * order: the inner loop runs along contiguous rows of B and C (no strided access; the fp32 kernel is shaped so
 * that C2 vectorizes it). Callers that
 * need a transposed operand transpose it first ({@link #transpose}), which costs one pass over it, except for a
 * weight held as [out, in] ({@link #accumulateTransposed}: a 151936×896 head would need a 544 MB copy per call).
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
            Parallel.rows(m, 2L * m * k * n, (start, end) -> accumulate(cf.data, af.data, bf.data, false, k, n, start, end));
        } else if (c instanceof Tensor.F64 cd && a instanceof Tensor.F64 ad && b instanceof Tensor.F64 bd) {
            Parallel.rows(m, 2L * m * k * n, (start, end) -> accumulate(cd.data, ad.data, bd.data, k, n, start, end));
        } else {
            throw new IllegalArgumentException("matmul of mixed precisions: " + c + ", " + a + ", " + b);
        }
    }

    /**
     * c[m,n] += a[m,k]·bᵀ where {@code bT} is [n,k] row-major (a Linear's weight, [out, in]): the same sums in the
     * same order as {@code accumulate(c, a, transpose(bT, n, k), m, k, n)}, so bit for bit the same result, but the
     * fp32 kernel gathers each column tile of bᵀ into its tile rows instead of allocating the transposed copy.
     */
    public static void accumulateTransposed(Tensor c, Tensor a, Tensor bT, int m, int k, int n) {
        if (c instanceof Tensor.F32 cf && a instanceof Tensor.F32 af && bT instanceof Tensor.F32 bf) {
            if (a.size() != m * k || bT.size() != k * n || c.size() != m * n) {
                throw new IllegalArgumentException("matmul sizes: a " + a + ", bT " + bT + ", c " + c + " for m=" + m
                        + " k=" + k + " n=" + n);
            }
            Parallel.rows(m, 2L * m * k * n, (start, end) -> accumulate(cf.data, af.data, bf.data, true, k, n, start, end));
        } else {
            accumulate(c, a, transpose(bT, n, k), m, k, n);
        }
    }

    /** Columns of c (and b) per tile: two tile rows of c, 4 KiB, stay in L1 while k runs over them. */
    static final int TILE = 512;

    /**
     * Rows [start, end) of c += a·b (a·bᵀ when {@code bTransposed}, b then being [n,k]), fp32, shaped so that JDK 17's C2 auto-vectorizes the inner loops (SuperWord).
     * SuperWord packs loads and stores only when it can show they do not overlap, and it compares two array
     * accesses only if their loop-invariant offsets are the same: {@code c[cRow + j]} against {@code b[bRow + j]}
     * is "not comparable", so a loop over the flat arrays stays scalar. Here the inner loops touch only
     * {@code acc[j]} and {@code q[j]}, zero-offset accesses of distinct arrays: the current column tile of c
     * is copied into {@code acc} rows, and the same tile of b into one array per row of b ({@code tile[p]}), once
     * per call and shared by every row of the range. Two rows of c share each load of b, four steps of k share
     * each load and store of c, and the body stays small enough for C2 to unroll it to vector width.
     * <p>
     * Rounding is unchanged: each c element starts from its current value and gets {@code a[i,p]·b[p,j]} added
     * for p = 0, 1, …, k-1 in order, every product and every sum rounded to float. {@code acc + x0·q0 + x1·q1 + …}
     * evaluates left to right and Java never fuses a multiply-add, so this is the textbook loop's sequence of
     * roundings; tiles and row ranges only change which elements are worked on when, so no element's result
     * depends on the tiling or the thread count.
     */
    static void accumulate(float[] c, float[] a, float[] b, boolean bTransposed, int k, int n, int start, int end) {
        if (start >= end || n == 0) {
            return;
        }
        int width = Math.min(n, TILE);
        float[][] tile = new float[k][width];
        float[] acc0 = new float[width];
        float[] acc1 = new float[width];
        for (int j0 = 0; j0 < n; j0 += TILE) {
            int w = Math.min(n - j0, TILE);
            if (bTransposed) { // b is [n,k]: tile[p][j] = b[j0 + j, p], read along b's rows
                for (int j = 0; j < w; j++) {
                    int row = (j0 + j) * k;
                    for (int p = 0; p < k; p++) {
                        tile[p][j] = b[row + p];
                    }
                }
            } else {
                for (int p = 0; p < k; p++) {
                    System.arraycopy(b, p * n + j0, tile[p], 0, w);
                }
            }
            int i = start;
            for (; i + 1 < end; i += 2) {
                System.arraycopy(c, i * n + j0, acc0, 0, w);
                System.arraycopy(c, (i + 1) * n + j0, acc1, 0, w);
                accumulateTwoRows(acc0, acc1, a, i * k, (i + 1) * k, tile, k, w);
                System.arraycopy(acc0, 0, c, i * n + j0, w);
                System.arraycopy(acc1, 0, c, (i + 1) * n + j0, w);
            }
            if (i < end) {
                System.arraycopy(c, i * n + j0, acc0, 0, w);
                for (int p = 0; p < k; p++) {
                    float x = a[i * k + p];
                    float[] q = tile[p];
                    for (int j = 0; j < w; j++) {
                        acc0[j] += x * q[j];
                    }
                }
                System.arraycopy(acc0, 0, c, i * n + j0, w);
            }
        }
    }

    /** acc0 += a[r0..]·tile, acc1 += a[r1..]·tile over the first w columns, k in increasing order. */
    private static void accumulateTwoRows(float[] acc0, float[] acc1, float[] a, int r0, int r1, float[][] tile,
            int k, int w) {
        int p = 0;
        for (; p + 3 < k; p += 4) {
            float x0 = a[r0 + p], x1 = a[r0 + p + 1], x2 = a[r0 + p + 2], x3 = a[r0 + p + 3];
            float y0 = a[r1 + p], y1 = a[r1 + p + 1], y2 = a[r1 + p + 2], y3 = a[r1 + p + 3];
            float[] q0 = tile[p], q1 = tile[p + 1], q2 = tile[p + 2], q3 = tile[p + 3];
            for (int j = 0; j < w; j++) {
                float b0 = q0[j], b1 = q1[j], b2 = q2[j], b3 = q3[j];
                acc0[j] = acc0[j] + x0 * b0 + x1 * b1 + x2 * b2 + x3 * b3;
                acc1[j] = acc1[j] + y0 * b0 + y1 * b1 + y2 * b2 + y3 * b3;
            }
        }
        for (; p < k; p++) {
            float x = a[r0 + p], y = a[r1 + p];
            float[] q = tile[p];
            for (int j = 0; j < w; j++) {
                float v = q[j];
                acc0[j] += x * v;
                acc1[j] += y * v;
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
