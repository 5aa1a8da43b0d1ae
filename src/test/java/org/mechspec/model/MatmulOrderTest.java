package org.mechspec.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The tiled, vectorizable fp32 kernel must round exactly as the definition: each c element starts from its own
 * value and adds a[i,p]·b[p,j] for p = 0..k-1 in order, one float multiply and one float add per step.
 */
class MatmulOrderTest {

    /** The definition, written out: same products, same order, same roundings. */
    private static float[] reference(float[] c0, float[] a, float[] b, int m, int k, int n) {
        float[] c = c0.clone();
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                float sum = c[i * n + j];
                for (int p = 0; p < k; p++) {
                    float product = a[i * k + p] * b[p * n + j];
                    sum = sum + product;
                }
                c[i * n + j] = sum;
            }
        }
        return c;
    }

    private static float[] random(Random random, int size, float scale) {
        float[] x = new float[size];
        for (int i = 0; i < size; i++) {
            x[i] = (float) random.nextGaussian() * scale;
        }
        return x;
    }

    private static void assertBitIdentical(float[] expected, float[] actual, String shape) {
        assertThat(actual).hasSameSizeAs(expected);
        for (int i = 0; i < expected.length; i++) {
            if (Float.floatToRawIntBits(actual[i]) != Float.floatToRawIntBits(expected[i])) {
                throw new AssertionError(shape + ": element " + i + " is " + actual[i] + ", the definition gives "
                        + expected[i]);
            }
        }
    }

    private static void check(Random random, int m, int k, int n, boolean accumulate) {
        float[] a = random(random, m * k, 1f);
        float[] b = random(random, k * n, 1f);
        // Values of mixed magnitude make the sums order-sensitive, so any reordering shows.
        for (int i = 0; i < b.length; i += 7) {
            b[i] *= 1e4f;
        }
        float[] c = accumulate ? random(random, m * n, 100f) : new float[m * n];
        float[] expected = reference(c, a, b, m, k, n);
        String shape = m + "x" + k + "x" + n + (accumulate ? " into non-zero c" : "");

        float[] whole = c.clone();
        Matmul.accumulate(whole, a, b, false, k, n, 0, m);
        assertBitIdentical(expected, whole, shape);

        // Row ranges, as Parallel hands them to threads, give the same bits.
        float[] split = c.clone();
        int mid = m / 3;
        Matmul.accumulate(split, a, b, false, k, n, 0, mid);
        Matmul.accumulate(split, a, b, false, k, n, mid, m);
        assertBitIdentical(expected, split, shape + " in two row ranges");

        // And through the public entry point.
        Tensor.F32 ct = tensor(c, m, n);
        Tensor.F32 at = tensor(a, m, k);
        Matmul.accumulate(ct, at, tensor(b, k, n), m, k, n);
        assertBitIdentical(expected, ct.data, shape + " via Tensor");

        // b held as [n,k] (a Linear's weight): the kernel gathers its tiles, and the bits are the definition's.
        float[] bT = transpose(b, k, n);
        float[] gathered = c.clone();
        Matmul.accumulate(gathered, a, bT, true, k, n, 0, mid);
        Matmul.accumulate(gathered, a, bT, true, k, n, mid, m);
        assertBitIdentical(expected, gathered, shape + " with b given as [n,k]");
        Tensor.F32 ct2 = tensor(c, m, n);
        Matmul.accumulateTransposed(ct2, at, tensor(bT, n, k), m, k, n);
        assertBitIdentical(expected, ct2.data, shape + " via accumulateTransposed");
    }

    private static Tensor.F32 tensor(float[] data, int rows, int cols) {
        Tensor.F32 t = (Tensor.F32) Tensor.zeros(Precision.FP32, rows, cols);
        System.arraycopy(data, 0, t.data, 0, data.length);
        return t;
    }

    /** The [n,k] row-major copy of a [k,n] row-major matrix. */
    private static float[] transpose(float[] b, int k, int n) {
        float[] t = new float[b.length];
        for (int p = 0; p < k; p++) {
            for (int j = 0; j < n; j++) {
                t[j * k + p] = b[p * n + j];
            }
        }
        return t;
    }

    @Test
    void oddShapesMatchTheDefinitionBitForBit() {
        Random random = new Random(20240611L);
        int[][] shapes = {{1, 1, 1}, {3, 5, 7}, {33, 17, 65}, {1, 3, 1}, {5, 1, 9}, {2, 4, 3}, {7, 8, 5},
                {4, 13, 511}, {3, 6, 512}, {5, 9, 513}, {2, 7, 1023}, {3, 5, 1025}, {6, 2, 1537}};
        for (int[] s : shapes) {
            check(random, s[0], s[1], s[2], false);
            check(random, s[0], s[1], s[2], true);
        }
    }

    @Test
    void theDataWouldShowAReordering() {
        // Guard on the test itself: summing k backwards gives different bits on these inputs.
        Random random = new Random(20240611L);
        int m = 33, k = 17, n = 65;
        float[] a = random(random, m * k, 1f);
        float[] b = random(random, k * n, 1f);
        for (int i = 0; i < b.length; i += 7) {
            b[i] *= 1e4f;
        }
        float[] forward = reference(new float[m * n], a, b, m, k, n);
        int differing = 0;
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                float sum = 0f;
                for (int p = k - 1; p >= 0; p--) {
                    sum += a[i * k + p] * b[p * n + j];
                }
                if (Float.floatToRawIntBits(sum) != Float.floatToRawIntBits(forward[i * n + j])) {
                    differing++;
                }
            }
        }
        assertThat(differing).isGreaterThan(m * n / 10);
    }

    @Test
    void emptyDimensionsLeaveCUnchanged() {
        float[] c = {1f, 2f, 3f, 4f};
        Matmul.accumulate(c, new float[0], new float[0], false, 0, 2, 0, 2);
        assertThat(c).containsExactly(1f, 2f, 3f, 4f);
    }

    @Test
    void nanAndInfinityPropagateAsInTheDefinition() {
        Random random = new Random(7L);
        int m = 3, k = 9, n = 515;
        float[] a = random(random, m * k, 1f);
        float[] b = random(random, k * n, 1f);
        a[1] = Float.POSITIVE_INFINITY;
        a[k + 4] = Float.NaN;
        b[2 * n + 3] = Float.NEGATIVE_INFINITY;
        b[5 * n + 600 % n] = Float.MAX_VALUE;
        b[6 * n + 514] = 0f;
        float[] c = random(random, m * n, 1f);
        c[2 * n + 7] = Float.NaN;
        float[] expected = reference(c, a, b, m, k, n);
        float[] transposedFrom = c.clone();
        Matmul.accumulate(c, a, b, false, k, n, 0, m);
        assertBitIdentical(expected, c, "non-finite values");
        Matmul.accumulate(transposedFrom, a, transpose(b, k, n), true, k, n, 0, m);
        assertBitIdentical(expected, transposedFrom, "non-finite values, b given as [n,k]");
    }
}
