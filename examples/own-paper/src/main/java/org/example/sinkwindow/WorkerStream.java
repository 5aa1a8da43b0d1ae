package org.example.sinkwindow;

import java.util.stream.IntStream;
import org.mechspec.worker.Call;
import org.mechspec.worker.Implementation;
import org.mechspec.worker.Operations;
import org.mechspec.worker.WireTensor.Dtype;

/**
 * This paper's own worker operation (contracts/sink-window.json declares it), served by an outside implementation:
 * the stream goes over whole, and what comes back is read into the same trace this package's cache gives, so the
 * checks judge both alike. The worker says which positions it held after each token (a 0/1 mask), each query's
 * output, and the bytes its key and value storage takes (self-reported: nothing outside the worker measures it).
 */
final class WorkerStream {
    static final String OPERATION = "sinkwindow.stream";

    private WorkerStream() {
    }

    /** Whether {@code impl} serves the operation; if not, the run says it fell back to this package's cache. */
    static boolean served(Implementation impl) {
        if (impl.serves(OPERATION, Operations.F64)) {
            return true;
        }
        impl.fellBack(OPERATION);
        return false;
    }

    static SinkWindowProtocol.Trace run(Implementation impl, long seed, int sinks, int window, SinkWindowProtocol.Stream s) {
        int tokens = s.keys().length;
        Call.Reply reply = impl.call(OPERATION, Operations.F64).input("keys", s.keys()).input("values", s.values())
                .input("queries", s.queries()).param("sinks", sinks).param("window", window)
                .output("held", Dtype.I32, tokens, tokens).output("outputs", Dtype.F64, tokens, s.values()[0].length)
                .output("stored_bytes", Dtype.I64, 1).run();
        int[][] mask = reply.i32Rows("held");
        int[][] held = new int[tokens][];
        for (int t = 0; t < tokens; t++) {
            int[] row = mask[t];
            held[t] = IntStream.range(0, tokens).filter(p -> row[p] != 0).toArray();
        }
        return new SinkWindowProtocol.Trace(seed, sinks, window, s, held, reply.f64Rows("outputs"), reply.i64("stored_bytes")[0]);
    }
}
