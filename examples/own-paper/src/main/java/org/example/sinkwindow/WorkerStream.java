package org.example.sinkwindow;

import org.mechspec.worker.Call;
import org.mechspec.worker.Implementation;
import org.mechspec.worker.Operations;
import org.mechspec.worker.WireTensor;

/**
 * {@value SinkWindowProtocol#STREAM} served by an outside implementation: the stream goes over whole, and what comes
 * back is read into the same trace this package's cache gives, so the checks judge both alike. The worker's cache is
 * its own business; it says which positions it held after each token (a 0/1 mask), what each query's output was, and
 * how many bytes its key and value storage takes (what it reports: a worker could lie here, and nothing outside it
 * measures it).
 */
final class WorkerStream {
    private WorkerStream() {
    }

    static SinkWindowProtocol.Trace run(Implementation impl, long seed, int sinks, int window, double[][] keys, double[][] values,
                                        double[][] queries) {
        int tokens = keys.length;
        int keyDim = keys[0].length;
        int valueDim = values[0].length;
        Call.Reply reply = impl.call(SinkWindowProtocol.STREAM, Operations.F64)
                .input("keys", flat(keys), tokens, keyDim).input("values", flat(values), tokens, valueDim)
                .input("queries", flat(queries), tokens, keyDim).param("sinks", sinks).param("window", window)
                .output("held", WireTensor.Dtype.I32, tokens, tokens).output("outputs", WireTensor.Dtype.F64, tokens, valueDim)
                .output("stored_bytes", WireTensor.Dtype.I64, 1).run();
        int[] mask = reply.i32("held");
        double[] out = reply.f64("outputs");
        int[][] held = new int[tokens][];
        double[][] outputs = new double[tokens][];
        for (int t = 0; t < tokens; t++) {
            int row = t;
            held[t] = java.util.stream.IntStream.range(0, tokens).filter(p -> mask[row * tokens + p] != 0).toArray();
            outputs[t] = java.util.Arrays.copyOfRange(out, t * valueDim, (t + 1) * valueDim);
        }
        return new SinkWindowProtocol.Trace(seed, sinks, window, keys, values, queries, held, outputs, reply.i64("stored_bytes")[0]);
    }

    private static double[] flat(double[][] rows) {
        double[] out = new double[rows.length * rows[0].length];
        for (int i = 0; i < rows.length; i++) {
            System.arraycopy(rows[i], 0, out, i * rows[0].length, rows[0].length);
        }
        return out;
    }
}
