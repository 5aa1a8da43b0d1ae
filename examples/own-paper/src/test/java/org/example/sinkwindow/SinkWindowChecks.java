package org.example.sinkwindow;

import java.util.Arrays;
import java.util.stream.IntStream;
import org.mechspec.spec.Figures;

/**
 * The figures of contracts/sink-window.json recomputed from a run's trace by their definitions: an independent computation
 * (plain loops, the full uncompressed one, a closed form), never the mechanism's own code. The seeded halves record
 * them; the mutants judge a broken mechanism's trace through them.
 */
final class SinkWindowChecks {
    private SinkWindowChecks() {
    }

    /** One component per metric the manifest declares, named like it in camelCase (example_error → exampleError). */
    record Measured(double heldMismatches, double decodeMaxError, double shortStreamMaxError, double storedBytesExcess, double fullAttentionGap) {
    }

    static Measured figures(SinkWindowProtocol.Trace t) {
        long mismatches = 0;
        double decodeError = 0;
        double shortError = 0;
        double gap = 0; // how far eviction moves decode from attending over every token so far
        double[][] keys = t.stream().keys();
        double[][] values = t.stream().values();
        for (int step = 0; step < keys.length; step++) {
            int[] expected = heldByDefinition(step + 1, t.sinks(), t.window());
            if (!Arrays.equals(expected, t.held()[step])) {
                mismatches++;
            }
            double[] dense = maskedAttention(t.stream().queries()[step], keys, values, step + 1, expected);
            decodeError = Math.max(decodeError, Figures.maxAbsDifference(dense, t.outputs()[step]));
            double[] full = maskedAttention(t.stream().queries()[step], keys, values, step + 1, IntStream.range(0, step + 1).toArray());
            gap = Math.max(gap, Figures.maxAbsDifference(full, t.outputs()[step]));
            if (step + 1 <= t.sinks() + t.window()) {
                shortError = Math.max(shortError, Figures.maxAbsDifference(full, t.outputs()[step]));
            }
        }
        long formula = (long) (t.sinks() + t.window()) * (keys[0].length + values[0].length) * Double.BYTES;
        return new Measured(mismatches, decodeError, shortError, Math.abs(t.storedBytes() - formula), gap);
    }

    /** After {@code arrived} tokens: positions below {@code sinks}, and the last {@code window} ones. */
    static int[] heldByDefinition(int arrived, int sinks, int window) {
        return IntStream.range(0, arrived).filter(p -> p < sinks || p >= arrived - window).toArray();
    }

    /** Softmax attention of {@code q} over keys 0..arrived-1 with every key outside {@code kept} masked (weight 0). */
    static double[] maskedAttention(double[] q, double[][] keys, double[][] values, int arrived, int[] kept) {
        boolean[] keep = new boolean[arrived];
        for (int p : kept) {
            keep[p] = true;
        }
        double[] logits = new double[arrived];
        double max = Double.NEGATIVE_INFINITY;
        for (int j = 0; j < arrived; j++) {
            double dot = 0;
            for (int i = 0; i < q.length; i++) {
                dot += q[i] * keys[j][i];
            }
            logits[j] = keep[j] ? dot / Math.sqrt(q.length) : Double.NEGATIVE_INFINITY;
            max = Math.max(max, logits[j]);
        }
        double sum = 0;
        double[] weights = new double[arrived];
        for (int j = 0; j < arrived; j++) {
            weights[j] = keep[j] ? Math.exp(logits[j] - max) : 0;
            sum += weights[j];
        }
        double[] out = new double[values[0].length];
        for (int j = 0; j < arrived; j++) {
            for (int i = 0; i < out.length; i++) {
                out[i] += weights[j] / sum * values[j][i];
            }
        }
        return out;
    }
}
