package org.example.sinkwindow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mechspec.spec.Properties.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.function.ToDoubleFunction;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Backend;
import org.mechspec.spec.Contract;
import org.mechspec.spec.PropertyRun;
import org.mechspec.spec.SeedRun;
import org.mechspec.spec.Seeded;
import org.mechspec.spec.Stress;

/**
 * The checks of contracts/sink-window.json: per check a seeded half (each backend and manifest seed: the protocol's figures
 * judged by the manifest) and a property half (generated inputs against the definition).
 */
@Tag("sink-window")
class SinkWindowContracts {
    /**
     * A property half: on every generated stream (0-7 sinks, window 1-24, 1-80 tokens, dims 1-9 and 1-7), the
     * figure {@code metric} of the cache's trace stands in {@code op} to {@code bound}.
     */
    private static void property(PropertyRun run, String metric, ToDoubleFunction<SinkWindowChecks.Measured> figure, String op,
                                 double bound) {
        Backend backend = run.backend(); // an outside implementation's, when the run judges one
        qt().withExamples(Stress.examples(300))
                .forAll(integers().between(0, 7), integers().between(1, 24), integers().between(1, 80), longs().all())
                .checkAssert((sinks, window, tokens, seed) -> {
                    int keyDim = 1 + (int) Math.floorMod(seed, 9L);
                    int valueDim = 1 + (int) Math.floorMod(seed / 9, 7L);
                    var stream = SinkWindowProtocol.Stream.draw(seed, tokens, keyDim, valueDim, 3);
                    SinkWindowChecks.Measured m = SinkWindowChecks.figures(SinkWindowProtocol.run(seed, sinks, window, stream, backend));
                    String input = sinks + " sinks, window " + window + ", " + tokens + " tokens, dims " + keyDim + "/" + valueDim;
                    double value = figure.applyAsDouble(m);
                    assertThat(Stress.figure(metric, value, op, bound, () -> input))
                            .as("%s = %s, not %s %s, on %s", metric, value, op, bound, input).isTrue();
                });
    }

    @Contract(paper = "sink-window", check = "held_positions_exact")
    @Seeded
    void heldPositionsExact(SeedRun run) {
        // Figures recomputed from the run's trace by their definitions, then judged as contracts/sink-window.json declares.
        run.metrics(SinkWindowChecks.figures(run.protocol(SinkWindowProtocol.Trace.class, SinkWindowProtocol::run)));
        run.baselines(name -> SinkWindowChecks.figures(SinkWindowProtocol.baseline(name, run.seed())));
        run.check();
    }

    @Contract(paper = "sink-window", check = "held_positions_exact")
    @Test
    void heldPositionsExactProperty(PropertyRun run) {
        property(run, "held_mismatches", SinkWindowChecks.Measured::heldMismatches, "=", 0);
    }

    @Contract(paper = "sink-window", check = "decode_matches_masked_dense")
    @Seeded
    void decodeMatchesMaskedDense(SeedRun run) {
        // Figures recomputed from the run's trace by their definitions, then judged as contracts/sink-window.json declares.
        run.metrics(SinkWindowChecks.figures(run.protocol(SinkWindowProtocol.Trace.class, SinkWindowProtocol::run)));
        run.baselines(name -> SinkWindowChecks.figures(SinkWindowProtocol.baseline(name, run.seed())));
        run.check();
    }

    @Contract(paper = "sink-window", check = "decode_matches_masked_dense")
    @Test
    void decodeMatchesMaskedDenseProperty(PropertyRun run) {
        property(run, "decode_max_error", SinkWindowChecks.Measured::decodeMaxError, "<=", run.threshold());
    }

    @Contract(paper = "sink-window", check = "short_stream_is_full_attention")
    @Seeded
    void shortStreamIsFullAttention(SeedRun run) {
        // Figures recomputed from the run's trace by their definitions, then judged as contracts/sink-window.json declares.
        run.metrics(SinkWindowChecks.figures(run.protocol(SinkWindowProtocol.Trace.class, SinkWindowProtocol::run)));
        run.baselines(name -> SinkWindowChecks.figures(SinkWindowProtocol.baseline(name, run.seed())));
        run.check();
    }

    @Contract(paper = "sink-window", check = "short_stream_is_full_attention")
    @Test
    void shortStreamIsFullAttentionProperty(PropertyRun run) {
        property(run, "short_stream_max_error", SinkWindowChecks.Measured::shortStreamMaxError, "<=", run.threshold());
    }

    @Contract(paper = "sink-window", check = "stored_bytes_exact")
    @Seeded
    void storedBytesExact(SeedRun run) {
        // Figures recomputed from the run's trace by their definitions, then judged as contracts/sink-window.json declares.
        run.metrics(SinkWindowChecks.figures(run.protocol(SinkWindowProtocol.Trace.class, SinkWindowProtocol::run)));
        run.baselines(name -> SinkWindowChecks.figures(SinkWindowProtocol.baseline(name, run.seed())));
        run.check();
    }

    @Contract(paper = "sink-window", check = "stored_bytes_exact")
    @Test
    void storedBytesExactProperty(PropertyRun run) {
        property(run, "stored_bytes_excess", SinkWindowChecks.Measured::storedBytesExcess, "=", 0);
    }
}
