package org.mechspec.foldbias;

import org.mechspec.worker.Implementation;
import org.mechspec.worker.Operations;
import org.mechspec.worker.WireTensor;

/**
 * fold-bias's seams served by an outside implementation ({@code PROTOCOL.md}): each operation the worker serves goes
 * to it, the others stay mechspec's, each such call reported ({@code Implementation.fellBack}) so a check that reached
 * none of the worker's operations is not taken for a verdict on it. Inputs are checked here as the mechanism's own parts check them, so bad input is
 * refused the same way before it reaches the worker.
 */
final class WorkerFoldBias {
    private WorkerFoldBias() {
    }

    static Solvers solvers(Implementation impl) {
        return new Solvers() {
            @Override
            public double[] nnls(double[] a, int rows, int cols, double[] b) {
                if (!impl.serves("foldbias.nnls", Operations.F64)) {
                    impl.fellBack("foldbias.nnls");
                    return EXACT.nnls(a, rows, cols, b);
                }
                requireLength("a", a, (long) rows * cols);
                requireLength("b", b, rows);
                return impl.call("foldbias.nnls", Operations.F64).input("a", a, rows, cols).input("b", b, rows)
                        .output("w", WireTensor.Dtype.F64, cols).run().f64("w");
            }

            @Override
            public double[] leastSquares(double[] x, int rows, int cols, double[] y, int yCols) {
                if (!impl.serves("foldbias.least_squares", Operations.F64)) {
                    impl.fellBack("foldbias.least_squares");
                    return EXACT.leastSquares(x, rows, cols, y, yCols);
                }
                requireLength("x", x, (long) rows * cols);
                requireLength("y", y, (long) rows * yCols);
                return impl.call("foldbias.least_squares", Operations.F64).input("x", x, rows, cols).input("y", y, rows, yCols)
                        .output("w", WireTensor.Dtype.F64, cols, yCols).run().f64("w");
            }

            @Override
            public double[] foldDirection(double[] a, int rows, int d, double lambda) {
                if (!impl.serves("foldbias.fold_direction", Operations.F64)) {
                    impl.fellBack("foldbias.fold_direction");
                    return EXACT.foldDirection(a, rows, d, lambda);
                }
                requireLength("a", a, (long) rows * d);
                try {
                    return impl.call("foldbias.fold_direction", Operations.F64).input("a", a, rows, d).param("lambda", lambda)
                            .output("u", WireTensor.Dtype.F64, d).run().f64("u");
                } catch (org.mechspec.worker.WorkerException e) {
                    if (e.type().equals("singular")) {
                        throw new ArithmeticException(e.getMessage());
                    }
                    throw e;
                }
            }
        };
    }

    static RankOneFold fold(Implementation impl) {
        return (compactKeys, beta, u, t, d) -> {
            if (!impl.serves("foldbias.rank_one_fold", Operations.F64)) {
                impl.fellBack("foldbias.rank_one_fold");
                return new CpuRankOneFold().fold(compactKeys, beta, u, t, d);
            }
            RankOneFold.validate(compactKeys, beta, u, t, d);
            return impl.call("foldbias.rank_one_fold", Operations.F64).input("compact_keys", compactKeys, t, d)
                    .input("beta", beta, t).input("u", u, d).output("folded_keys", WireTensor.Dtype.F64, t, d).run().f64("folded_keys");
        };
    }

    static KeySelector selector(Implementation impl) {
        return (weights, queries, keys, t) -> {
            if (!impl.serves("foldbias.select_keys", Operations.F64)) {
                impl.fellBack("foldbias.select_keys");
                return KeySelector.TOP_BY_MAX_WEIGHT.select(weights, queries, keys, t);
            }
            if (t > keys) {
                throw new IllegalArgumentException("t (compact keys) = " + t + " exceeds the " + keys + " keys available");
            }
            requireLength("weights", weights, (long) queries * keys);
            long[] chosen = impl.call("foldbias.select_keys", Operations.F64).input("weights", weights, queries, keys).param("t", t)
                    .output("indices", WireTensor.Dtype.I64, t).run().i64("indices");
            int[] out = new int[t];
            for (int i = 0; i < t; i++) {
                // Range and order are the selection check's to judge; only an index that is no int is refused here.
                if (chosen[i] != (int) chosen[i]) {
                    throw new IllegalArgumentException("worker " + impl.id() + ": foldbias.select_keys: output 'indices' index " + i
                            + " = " + chosen[i] + " is no key index");
                }
                out[i] = (int) chosen[i];
            }
            return out;
        };
    }

    private static void requireLength(String name, double[] x, long expected) {
        if (x.length != expected) {
            throw new IllegalArgumentException(name + " has " + x.length + " elements, shape needs " + expected);
        }
    }
}
