package org.example.sinkwindow;

import org.mechspec.compute.Backend;
import org.mechspec.compute.Rng;
import org.mechspec.worker.WorkerBackend;

/**
 * The sink-window protocol of contracts/sink-window.json: one seed's inputs from the pinned RNG and what the mechanism made of them.
 * It returns that trace, not figures: the contracts recompute each figure from the trace by its definition
 * (SinkWindowChecks in src/test), so a mechanism never grades itself.
 */
public final class SinkWindowProtocol {
    /** The protocol's sizes: tokens in the stream, sinks and window kept, key (and query) and value dimensions. */
    public static final int TOKENS = 96, SINKS = 4, WINDOW = 16, KEY_DIM = 8, VALUE_DIM = 6;

    private SinkWindowProtocol() {
    }

    /** One seed's run as the checks read it: the inputs drawn and the mechanism's outputs (and what it kept). */
    public record Trace(long seed, int sinks, int window, Stream stream, int[][] held, double[][] outputs, long storedBytes) {
    }

    /** A stream: per token t, its key, value and query (rows). */
    public record Stream(double[][] keys, double[][] values, double[][] queries) {
        /** Per token t in order: key, value ~ N(0, 1), query ~ N(0, queryStd²), from mechspec's {@code Rng(seed)}. */
        public static Stream draw(long seed, int tokens, int keyDim, int valueDim, double queryStd) {
            Rng rng = new Rng(seed);
            Stream s = new Stream(new double[tokens][], new double[tokens][], new double[tokens][]);
            for (int t = 0; t < tokens; t++) {
                s.keys[t] = rng.normals(keyDim, 0, 1);
                s.values[t] = rng.normals(valueDim, 0, 1);
                s.queries[t] = rng.normals(keyDim, 0, queryStd);
            }
            return s;
        }
    }

    /** Seed {@code seed}'s protocol stream. */
    public static Stream stream(long seed) {
        return Stream.draw(seed, TOKENS, KEY_DIM, VALUE_DIM, 1);
    }

    /**
     * Seed {@code seed}'s run: through an outside implementation's {@value WorkerStream#OPERATION} when
     * {@code backend} is one that serves it (README, "Your own papers"), else through this cache with its online
     * softmax (a CPU mechanism: every other backend gives the same).
     */
    public static Trace run(long seed, Backend backend) {
        return run(seed, SINKS, WINDOW, stream(seed), backend);
    }

    /** The given stream through {@code backend}'s {@value WorkerStream#OPERATION} when it is a worker serving it, else this cache. */
    public static Trace run(long seed, int sinks, int window, Stream stream, Backend backend) {
        if (backend instanceof WorkerBackend worker && WorkerStream.served(worker.implementation())) {
            return WorkerStream.run(worker.implementation(), seed, sinks, window, stream);
        }
        return run(seed, sinks, window, stream, SinkWindowCache.ONLINE_SOFTMAX);
    }

    /** Declared baseline {@code name}'s run on seed {@code seed}'s inputs (contracts/sink-window.json, "baselines"). */
    public static Trace baseline(String name, long seed) {
        int budget = SINKS + WINDOW;
        return switch (name) {
            case "recent_only" -> run(seed, 0, budget, stream(seed), SinkWindowCache.ONLINE_SOFTMAX);
            case "oldest_only" -> run(seed, budget - 1, 1, stream(seed), SinkWindowCache.ONLINE_SOFTMAX);
            default -> throw new IllegalArgumentException("no baseline '" + name + "'");
        };
    }

    /** The cache, with the given attention, fed the given stream: token t appended, then query t decoded. */
    public static Trace run(long seed, int sinks, int window, Stream s, SinkWindowCache.Attend attend) {
        SinkWindowCache cache = new SinkWindowCache(sinks, window, s.keys[0].length, s.values[0].length, attend);
        int[][] held = new int[s.keys.length][];
        double[][] outputs = new double[s.keys.length][];
        for (int t = 0; t < s.keys.length; t++) {
            cache.append(s.keys[t], s.values[t]);
            held[t] = cache.heldPositions();
            outputs[t] = cache.decode(s.queries[t]);
        }
        return new Trace(seed, sinks, window, s, held, outputs, cache.storedBytes());
    }
}
