package org.example.sinkwindow;

import java.util.Arrays;

/**
 * A KV cache that keeps the first {@code sinks} tokens ("attention sinks") and the {@code window} most recent ones,
 * and evicts the rest, in the manner of StreamingLLM. It holds at most {@code sinks + window} keys and values, in
 * fixed arrays allocated once: the sinks in the first slots, the window in a ring after them. Decoding attends over
 * what is held with a one-pass (online) softmax.
 */
public final class SinkWindowCache {
    /** How one query's attention is computed over the held keys: the seam a broken softmax is put in through. */
    public interface Attend {
        /** Softmax(q·k / √d) over {@code count} keys, weights applied to their values (rows of the arrays). */
        double[] attend(double[] q, double[][] keys, double[][] values, int count);
    }

    /** The online softmax: one pass, the running maximum rescaling what was summed so far. */
    public static final Attend ONLINE_SOFTMAX = (q, keys, values, count) -> {
        double scale = 1 / Math.sqrt(q.length);
        double max = Double.NEGATIVE_INFINITY;
        double sum = 0;
        double[] out = new double[values[0].length];
        for (int j = 0; j < count; j++) {
            double logit = 0;
            for (int i = 0; i < q.length; i++) {
                logit += q[i] * keys[j][i];
            }
            logit *= scale;
            double newMax = Math.max(max, logit);
            double rescale = Math.exp(max - newMax);
            double p = Math.exp(logit - newMax);
            sum = sum * rescale + p;
            for (int i = 0; i < out.length; i++) {
                out[i] = out[i] * rescale + p * values[j][i];
            }
            max = newMax;
        }
        for (int i = 0; i < out.length; i++) {
            out[i] /= sum;
        }
        return out;
    };

    private final int sinks;
    private final int window;
    private final Attend attend;
    private final double[][] keys;
    private final double[][] values;
    private final int[] positions;
    private int seen;

    /** An empty cache for keys of {@code keyDim} and values of {@code valueDim} numbers. */
    public SinkWindowCache(int sinks, int window, int keyDim, int valueDim, Attend attend) {
        if (sinks < 0 || window < 1 || keyDim < 1 || valueDim < 1) {
            throw new IllegalArgumentException("need sinks >= 0, window >= 1 and positive dims, got " + sinks + ", " + window
                    + ", " + keyDim + ", " + valueDim);
        }
        this.sinks = sinks;
        this.window = window;
        this.attend = attend;
        keys = new double[sinks + window][keyDim];
        values = new double[sinks + window][valueDim];
        positions = new int[sinks + window];
    }

    /** Appends the next token's key and value, evicting the oldest token of the window once it is full. */
    public void append(double[] key, double[] value) {
        if (key.length != keys[0].length || value.length != values[0].length) {
            throw new IllegalArgumentException("key or value of the wrong length: " + key.length + ", " + value.length);
        }
        int slot = seen < sinks ? seen : sinks + (seen - sinks) % window;
        keys[slot] = key.clone();
        values[slot] = value.clone();
        positions[slot] = seen;
        seen++;
    }

    /** How many tokens the cache holds now. */
    public int held() {
        return Math.min(seen, sinks + window);
    }

    /** The positions (in the stream) of the tokens held, ascending. */
    public int[] heldPositions() {
        int[] p = Arrays.copyOf(positions, held());
        Arrays.sort(p);
        return p;
    }

    /** The attention output of query {@code q} over the tokens held. */
    public double[] decode(double[] q) {
        if (seen == 0) {
            throw new IllegalStateException("decode over an empty cache");
        }
        return attend.attend(q, keys, values, held());
    }

    /** The bytes the cache's key and value storage takes (fp64 numbers), whatever it holds now. */
    public long storedBytes() {
        long numbers = Arrays.stream(keys).mapToLong(k -> k.length).sum() + Arrays.stream(values).mapToLong(v -> v.length).sum();
        return numbers * Double.BYTES;
    }
}
