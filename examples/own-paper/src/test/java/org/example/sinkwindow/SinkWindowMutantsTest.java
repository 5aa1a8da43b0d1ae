package org.example.sinkwindow;

import static org.assertj.core.api.Assertions.assertThat;
import static org.example.sinkwindow.SinkWindowProtocol.SINKS;
import static org.example.sinkwindow.SinkWindowProtocol.WINDOW;

import java.util.Arrays;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.spec.Breaks;
import org.mechspec.spec.Figures;
import org.mechspec.spec.Manifest;
import org.mechspec.spec.ManifestLoader;
import org.mechspec.spec.Records;

/**
 * Every check of contracts/sink-window.json can fail: a deliberately broken cache, built here in src/test through the
 * cache's attention seam or as the broken trace a faulty cache would hand the check, makes its figures report false
 * ({@link Figures#hold} judges as the seeded half's {@code run.check()} does).
 */
@Tag("sink-window")
class SinkWindowMutantsTest {
    private static final Manifest MANIFEST = ManifestLoader.forPaper("sink-window");
    private static final SinkWindowProtocol.Trace GOOD = cacheWith(SinkWindowCache.ONLINE_SOFTMAX);

    private static SinkWindowProtocol.Trace cacheWith(SinkWindowCache.Attend attend) {
        return SinkWindowProtocol.run(42, SINKS, WINDOW, SinkWindowProtocol.stream(42), attend);
    }

    private static boolean holds(String check, SinkWindowProtocol.Trace trace) {
        return Figures.hold(MANIFEST, check, SinkWindowChecks.figures(trace));
    }

    @Test
    void theUnbrokenCacheHoldsEveryCheck() {
        MANIFEST.checks().keySet().forEach(check -> assertThat(holds(check, GOOD)).as(check).isTrue());
    }

    @Test
    @Breaks(paper = "sink-window", check = "held_positions_exact", description = "the window holds one token too few: the newest is missing after every step past the sinks")
    void aWindowOneShortFailsHeldPositions() {
        int[][] held = Arrays.stream(GOOD.held()).map(h -> h.length > SINKS + 1 ? Arrays.copyOf(h, h.length - 1) : h).toArray(int[][]::new);
        assertThat(holds("held_positions_exact", Records.with(GOOD, "held", held))).isFalse();
    }

    @Test
    @Breaks(paper = "sink-window", check = "decode_matches_masked_dense", description = "the online softmax skips the rescale when the running maximum grows")
    @Breaks(paper = "sink-window", check = "short_stream_is_full_attention", description = "the online softmax skips the rescale when the running maximum grows")
    void aSoftmaxWithoutRescaleFailsDecodeAndShortStream() {
        SinkWindowProtocol.Trace broken = cacheWith((q, keys, values, count) -> {
            double max = Double.NEGATIVE_INFINITY;
            double sum = 0;
            double[] out = new double[values[0].length];
            for (int j = 0; j < count; j++) {
                double logit = 0;
                for (int i = 0; i < q.length; i++) {
                    logit += q[i] * keys[j][i] / Math.sqrt(q.length);
                }
                max = Math.max(max, logit);
                double p = Math.exp(logit - max); // earlier terms keep their old shift
                sum += p;
                for (int i = 0; i < out.length; i++) {
                    out[i] += p * values[j][i];
                }
            }
            double total = sum;
            return Arrays.stream(out).map(o -> o / total).toArray();
        });
        assertThat(holds("decode_matches_masked_dense", broken)).isFalse();
        assertThat(holds("short_stream_is_full_attention", broken)).isFalse();
    }

    @Test
    @Breaks(paper = "sink-window", check = "decode_matches_masked_dense", description = "decode attends over every slot, stale ones included, before the cache is full")
    void attendingOverEmptySlotsFailsDecode() {
        SinkWindowCache.Attend everySlot = (q, keys, values, count) -> SinkWindowCache.ONLINE_SOFTMAX.attend(q, keys, values, keys.length);
        assertThat(holds("decode_matches_masked_dense", cacheWith(everySlot))).isFalse();
    }

    @Test
    @Breaks(paper = "sink-window", check = "stored_bytes_exact", description = "the cache keeps every token and masks the evicted ones at read time")
    void keepingEveryTokenFailsStoredBytes() {
        long everyToken = (long) SinkWindowProtocol.TOKENS * (SinkWindowProtocol.KEY_DIM + SinkWindowProtocol.VALUE_DIM) * Double.BYTES;
        assertThat(holds("stored_bytes_exact", Records.with(GOOD, "storedBytes", everyToken))).isFalse();
    }
}
