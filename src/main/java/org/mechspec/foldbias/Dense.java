package org.mechspec.foldbias;

/**
 * Row-major fp64 matrix helpers with a fixed reduction order (left to right), so CPU results are bit-identical
 * from run to run. Matrices are plain {@code double[]} with their shape passed alongside.
 */
final class Dense {
    private Dense() {
    }

    /** out[i, j] = Σ_c a[i, c]·b[j, c] for a [rows, inner], b [bRows, inner]. */
    static double[] timesTransposed(double[] a, int rows, int inner, double[] b, int bRows) {
        double[] out = new double[rows * bRows];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < bRows; j++) {
                double s = 0.0;
                for (int c = 0; c < inner; c++) {
                    s += a[i * inner + c] * b[j * inner + c];
                }
                out[i * bRows + j] = s;
            }
        }
        return out;
    }

    /** out[i] = Σ_c a[i, c]·x[c] for a [rows, cols]. */
    static double[] times(double[] a, int rows, int cols, double[] x) {
        double[] out = new double[rows];
        for (int i = 0; i < rows; i++) {
            double s = 0.0;
            for (int c = 0; c < cols; c++) {
                s += a[i * cols + c] * x[c];
            }
            out[i] = s;
        }
        return out;
    }

    /** out[c] = Σ_i a[i, c]·x[i] for a [rows, cols]: Aᵀx. */
    static double[] transposedTimes(double[] a, int rows, int cols, double[] x) {
        double[] out = new double[cols];
        for (int i = 0; i < rows; i++) {
            for (int c = 0; c < cols; c++) {
                out[c] += a[i * cols + c] * x[i];
            }
        }
        return out;
    }

    /** aᵀb for a [rows, aCols], b [rows, bCols]. */
    static double[] transposedTimesMatrix(double[] a, int rows, int aCols, double[] b, int bCols) {
        double[] out = new double[aCols * bCols];
        for (int i = 0; i < rows; i++) {
            for (int r = 0; r < aCols; r++) {
                double ar = a[i * aCols + r];
                for (int c = 0; c < bCols; c++) {
                    out[r * bCols + c] += ar * b[i * bCols + c];
                }
            }
        }
        return out;
    }

    /** a·b for a [rows, inner], b [inner, cols]. */
    static double[] times(double[] a, int rows, int inner, double[] b, int cols) {
        double[] out = new double[rows * cols];
        for (int i = 0; i < rows; i++) {
            for (int k = 0; k < inner; k++) {
                double aik = a[i * inner + k];
                for (int c = 0; c < cols; c++) {
                    out[i * cols + c] += aik * b[k * cols + c];
                }
            }
        }
        return out;
    }

    static double[] scaled(double[] a, double s) {
        double[] out = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = a[i] * s;
        }
        return out;
    }

    static double[] minus(double[] a, double[] b) {
        double[] out = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = a[i] - b[i];
        }
        return out;
    }

    /** The listed rows of a [*, cols], in the listed order. */
    static double[] rows(double[] a, int cols, int[] rows) {
        double[] out = new double[rows.length * cols];
        for (int r = 0; r < rows.length; r++) {
            System.arraycopy(a, rows[r] * cols, out, r * cols, cols);
        }
        return out;
    }

    /** The listed columns of a [rows, cols], in the listed order. */
    static double[] columns(double[] a, int rows, int cols, int[] columns) {
        double[] out = new double[rows * columns.length];
        for (int i = 0; i < rows; i++) {
            for (int c = 0; c < columns.length; c++) {
                out[i * columns.length + c] = a[i * cols + columns[c]];
            }
        }
        return out;
    }

    static double maxAbs(double[] a) {
        double m = 0.0;
        for (double x : a) {
            m = Math.max(m, Math.abs(x));
        }
        return m;
    }

    static double maxAbsDifference(double[] a, double[] b) {
        if (a.length != b.length) {
            throw new IllegalArgumentException("length mismatch: " + a.length + " vs " + b.length);
        }
        double m = 0.0;
        for (int i = 0; i < a.length; i++) {
            m = Math.max(m, Math.abs(a[i] - b[i]));
        }
        return m;
    }

    /** Euclidean norm of row i of a [*, cols] minus row i of b. */
    static double rowDistance(double[] a, double[] b, int i, int cols) {
        double s = 0.0;
        for (int c = 0; c < cols; c++) {
            double diff = a[i * cols + c] - b[i * cols + c];
            s += diff * diff;
        }
        return Math.sqrt(s);
    }

    static double norm(double[] a) {
        double s = 0.0;
        for (double x : a) {
            s += x * x;
        }
        return Math.sqrt(s);
    }

    static double[] identity(int n) {
        double[] out = new double[n * n];
        for (int i = 0; i < n; i++) {
            out[i * n + i] = 1.0;
        }
        return out;
    }
}
