package org.example.sinkwindow;

import org.mechspec.compute.Backend;
import org.mechspec.compute.Rng;
import org.mechspec.worker.Implementation;
import org.mechspec.worker.Operations;
import org.mechspec.worker.WorkerBackend;

/**
 * The sink-window protocol of contracts/sink-window.json: one seed's stream of keys, values and queries from
 * mechspec's pinned RNG, fed to a {@link SinkWindowCache}, and what the cache held and answered at every step. It
 * returns that trace, not figures: the contracts recompute each figure from it by its definition.
 */
public final class SinkWindowProtocol {
    /** Tokens in the stream. */
    public static final int TOKENS = 96;
    /** Attention sinks kept. */
    public static final int SINKS = 4;
    /** Recent tokens kept. */
    public static final int WINDOW = 16;
    /** Key (and query) dimension. */
    public static final int KEY_DIM = 8;
    /** Value dimension. */
    public static final int VALUE_DIM = 6;
    /** This paper's own worker operation (contracts/sink-window.json declares it): the whole cache over one stream. */
    public static final String STREAM = "sinkwindow.stream";

    private SinkWindowProtocol() {
    }

    /**
     * One seed's run: the stream (token t's key, value and query), and after appending token t the positions held,
     * the output for query t, and the bytes stored.
     */
    public record Trace(long seed, int sinks, int window, double[][] keys, double[][] values, double[][] queries,
                        int[][] held, double[][] outputs, long storedBytes) {
    }

    /**
     * Seed {@code seed}'s run: through an outside implementation's {@value #STREAM} when {@code backend} is one that
     * serves it (README, "Your own papers"), else through this cache with its online softmax (a CPU mechanism: every
     * other backend gives the same).
     */
    public static Trace run(long seed, Backend backend) {
        Stream s = Stream.draw(seed);
        return run(seed, SINKS, WINDOW, s.keys, s.values, s.queries, backend);
    }

    /**
     * Declared baseline {@code name}'s run on seed {@code seed}'s stream (contracts/sink-window.json): the same budget
     * of sinks + window tokens, kept another way.
     */
    public static Trace baseline(String name, long seed) {
        Stream s = Stream.draw(seed);
        int budget = SINKS + WINDOW;
        return switch (name) {
            case "recent_only" -> run(seed, 0, budget, s.keys, s.values, s.queries, SinkWindowCache.ONLINE_SOFTMAX);
            case "oldest_only" -> run(seed, budget - 1, 1, s.keys, s.values, s.queries, SinkWindowCache.ONLINE_SOFTMAX);
            default -> throw new IllegalArgumentException("no baseline '" + name + "'");
        };
    }

    /** Seed {@code seed}'s run of this cache with the given attention, for a cache built around another one. */
    public static Trace run(long seed, SinkWindowCache.Attend attend) {
        Stream s = Stream.draw(seed);
        return run(seed, SINKS, WINDOW, s.keys, s.values, s.queries, attend);
    }

    /** The given stream through {@code backend}'s {@value #STREAM} when it is a worker serving it, else this cache. */
    public static Trace run(long seed, int sinks, int window, double[][] keys, double[][] values, double[][] queries, Backend backend) {
        if (backend instanceof WorkerBackend worker) {
            Implementation impl = worker.implementation();
            if (impl.serves(STREAM, Operations.F64)) {
                return WorkerStream.run(impl, seed, sinks, window, keys, values, queries);
            }
            impl.fellBack(STREAM);
        }
        return run(seed, sinks, window, keys, values, queries, SinkWindowCache.ONLINE_SOFTMAX);
    }

    /** The cache fed the given stream: token t appended, then query t decoded. */
    public static Trace run(long seed, int sinks, int window, double[][] keys, double[][] values, double[][] queries,
                            SinkWindowCache.Attend attend) {
        SinkWindowCache cache = new SinkWindowCache(sinks, window, keys[0].length, values[0].length, attend);
        int[][] held = new int[keys.length][];
        double[][] outputs = new double[keys.length][];
        for (int t = 0; t < keys.length; t++) {
            cache.append(keys[t], values[t]);
            held[t] = cache.heldPositions();
            outputs[t] = cache.decode(queries[t]);
        }
        return new Trace(seed, sinks, window, keys, values, queries, held, outputs, cache.storedBytes());
    }

    /** One seed's stream: per token t in order, its key, value and query ~ N(0, 1) from mechspec's Rng(seed). */
    private record Stream(double[][] keys, double[][] values, double[][] queries) {
        static Stream draw(long seed) {
            Rng rng = new Rng(seed);
            double[][] keys = new double[TOKENS][];
            double[][] values = new double[TOKENS][];
            double[][] queries = new double[TOKENS][];
            for (int t = 0; t < TOKENS; t++) {
                keys[t] = rng.normals(KEY_DIM, 0, 1);
                values[t] = rng.normals(VALUE_DIM, 0, 1);
                queries[t] = rng.normals(KEY_DIM, 0, 1);
            }
            return new Stream(keys, values, queries);
        }
    }
}
