package org.example.sinkwindow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.example.sinkwindow.SinkWindowProtocol.SINKS;
import static org.example.sinkwindow.SinkWindowProtocol.WINDOW;

import java.util.Arrays;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.CpuBackend;
import org.mechspec.spec.Breaks;
import org.mechspec.spec.Figures;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;
import org.mechspec.spec.Records;

/**
 * Every check of contracts/sink-window.json can fail: a deliberately broken mechanism, built here in src/test, makes the
 * check's figures report false (Figures.hold judges a result as the seeded half's run.check() does).
 */
@Tag("sink-window")
class SinkWindowMutantsTest {
    private static final Manifest MANIFEST = ManifestLoader.forPaper("sink-window");
    private static final SinkWindowProtocol.Trace GOOD = cacheWith(SinkWindowCache.ONLINE_SOFTMAX);
    /** A broken softmax through the cache's attention seam: logits divided by √d twice (a temperature of √d). */
    private static final SinkWindowCache.Attend SCALED_TWICE = (q, keys, values, count) -> SinkWindowCache.ONLINE_SOFTMAX.attend(
            Arrays.stream(q).map(x -> x / Math.sqrt(q.length)).toArray(), keys, values, count);

    private static SinkWindowProtocol.Trace cacheWith(SinkWindowCache.Attend attend) {
        return SinkWindowProtocol.run(42, SINKS, WINDOW, SinkWindowProtocol.stream(42), attend);
    }

    @Test
    @Breaks(paper = "sink-window", check = "held_positions_exact", description = "the window holds one token too few: the newest is missing after every step past the sinks")
    void heldPositionsExactReportsFalseOnABrokenMechanism() {
        assertThat(Figures.hold(MANIFEST, "held_positions_exact", SinkWindowChecks.figures(SinkWindowProtocol.run(42, CpuBackend.INSTANCE)))).as("unbroken").isTrue();
        int[][] held = Arrays.stream(GOOD.held()).map(h -> h.length > SINKS + 1 ? Arrays.copyOf(h, h.length - 1) : h).toArray(int[][]::new);
        assertThat(Figures.hold(MANIFEST, "held_positions_exact", SinkWindowChecks.figures(Records.with(GOOD, "held", held)))).isFalse();
    }

    @Test
    @Breaks(paper = "sink-window", check = "decode_matches_masked_dense", description = "the softmax divides the logits by the square root of d twice")
    void decodeMatchesMaskedDenseReportsFalseOnABrokenMechanism() {
        assertThat(Figures.hold(MANIFEST, "decode_matches_masked_dense", SinkWindowChecks.figures(SinkWindowProtocol.run(42, CpuBackend.INSTANCE)))).as("unbroken").isTrue();
        assertThat(Figures.hold(MANIFEST, "decode_matches_masked_dense", SinkWindowChecks.figures(cacheWith(SCALED_TWICE)))).isFalse();
    }

    @Test
    @Breaks(paper = "sink-window", check = "decode_matches_masked_dense", description = "decode attends over every slot, stale ones included, before the cache is full")
    void attendingOverEmptySlotsFailsDecode() {
        SinkWindowCache.Attend everySlot = (q, keys, values, count) -> SinkWindowCache.ONLINE_SOFTMAX.attend(q, keys, values, keys.length);
        assertThat(Figures.hold(MANIFEST, "decode_matches_masked_dense", SinkWindowChecks.figures(cacheWith(everySlot)))).isFalse();
    }

    @Test
    @Breaks(paper = "sink-window", check = "short_stream_is_full_attention", description = "the softmax divides the logits by the square root of d twice")
    void shortStreamIsFullAttentionReportsFalseOnABrokenMechanism() {
        assertThat(Figures.hold(MANIFEST, "short_stream_is_full_attention", SinkWindowChecks.figures(SinkWindowProtocol.run(42, CpuBackend.INSTANCE)))).as("unbroken").isTrue();
        assertThat(Figures.hold(MANIFEST, "short_stream_is_full_attention", SinkWindowChecks.figures(cacheWith(SCALED_TWICE)))).isFalse();
    }

    @Test
    @Breaks(paper = "sink-window", check = "stored_bytes_exact", description = "the cache keeps every token and masks the evicted ones at read time")
    void storedBytesExactReportsFalseOnABrokenMechanism() {
        assertThat(Figures.hold(MANIFEST, "stored_bytes_exact", SinkWindowChecks.figures(SinkWindowProtocol.run(42, CpuBackend.INSTANCE)))).as("unbroken").isTrue();
        long everyToken = (long) SinkWindowProtocol.TOKENS * (SinkWindowProtocol.KEY_DIM + SinkWindowProtocol.VALUE_DIM) * Double.BYTES;
        assertThat(Figures.hold(MANIFEST, "stored_bytes_exact", SinkWindowChecks.figures(Records.with(GOOD, "storedBytes", everyToken)))).isFalse();
    }
}
