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
 * The checks of contracts/sink-window.json: per check a seeded half (the protocol's figures for each manifest seed,
 * judged by the manifest) and a property half (generated streams, sink counts and windows, odd sizes included,
 * against the same definitions), on mechspec's cache or, when a run judges one, an outside implementation's
 * {@code sinkwindow.stream}.
 */
@Tag("sink-window")
class SinkWindowContracts {
    private static final String PAPER = "sink-window";

    /**
     * The seed's figures, recomputed from its protocol run (made once per launch and seed), judged by the manifest;
     * the declared baselines' figures recorded beside them.
     */
    private static void record(SeedRun run) {
        run.metrics(SinkWindowChecks.figures(run.protocol(SinkWindowProtocol.Trace.class, SinkWindowProtocol::run)));
        run.baselines(name -> SinkWindowChecks.figures(SinkWindowProtocol.baseline(name, run.seed())));
        run.check();
    }

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
                    assertThat(Stress.figure(metric, figure.applyAsDouble(m), op, bound, () -> input))
                            .as("%s %s %s on %s", metric, op, bound, input).isTrue();
                });
    }

    @Contract(paper = PAPER, check = "held_positions_exact")
    @Seeded
    void heldPositionsSeeded(SeedRun run) {
        record(run);
    }

    @Contract(paper = PAPER, check = "held_positions_exact")
    @Test
    void heldPositionsProperty(PropertyRun run) {
        property(run, "held_mismatches", SinkWindowChecks.Measured::heldMismatches, "=", 0);
    }

    @Contract(paper = PAPER, check = "decode_matches_masked_dense")
    @Seeded
    void decodeSeeded(SeedRun run) {
        record(run);
    }

    @Contract(paper = PAPER, check = "decode_matches_masked_dense")
    @Test
    void decodeProperty(PropertyRun run) {
        property(run, "decode_max_error", SinkWindowChecks.Measured::decodeMaxError, "<=", run.threshold());
    }

    @Contract(paper = PAPER, check = "short_stream_is_full_attention")
    @Seeded
    void shortStreamSeeded(SeedRun run) {
        record(run);
    }

    @Contract(paper = PAPER, check = "short_stream_is_full_attention")
    @Test
    void shortStreamProperty(PropertyRun run) {
        property(run, "short_stream_max_error", SinkWindowChecks.Measured::shortStreamMaxError, "<=", run.threshold());
    }

    @Contract(paper = PAPER, check = "stored_bytes_exact")
    @Seeded
    void storedBytesSeeded(SeedRun run) {
        record(run);
    }

    @Contract(paper = PAPER, check = "stored_bytes_exact")
    @Test
    void storedBytesProperty(PropertyRun run) {
        property(run, "stored_bytes_excess", SinkWindowChecks.Measured::storedBytesExcess, "=", 0);
    }
}
