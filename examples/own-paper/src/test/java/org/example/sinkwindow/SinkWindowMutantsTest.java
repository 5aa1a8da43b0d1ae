package org.example.sinkwindow;

import static org.assertj.core.api.Assertions.assertThat;

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

    private static boolean holds(String check, SinkWindowProtocol.Trace trace) {
        return Figures.hold(MANIFEST, check, SinkWindowChecks.figures(trace));
    }

    @Test
    void theUnbrokenCacheHoldsEveryCheck() {
        SinkWindowProtocol.Trace trace = SinkWindowProtocol.run(42, SinkWindowCache.ONLINE_SOFTMAX);
        for (String check : MANIFEST.checks().keySet()) {
            assertThat(holds(check, trace)).as(check).isTrue();
        }
    }

    @Test
    @Breaks(paper = "sink-window", check = "held_positions_exact", description = "the window holds one token too few: the newest is missing after every step past the sinks")
    void aWindowOneShortFailsHeldPositions() {
        SinkWindowProtocol.Trace good = SinkWindowProtocol.run(42, SinkWindowCache.ONLINE_SOFTMAX);
        // What a cache whose window evicts one token early would report: position t - window missing after every step past the sinks.
        int[][] held = new int[good.held().length][];
        for (int t = 0; t < held.length; t++) {
            int[] h = good.held()[t];
            held[t] = h.length > good.sinks() + 1 ? java.util.Arrays.copyOfRange(h, 0, h.length - 1) : h;
        }
        assertThat(holds("held_positions_exact", Records.with(good, "held", held))).isFalse();
    }

    @Test
    @Breaks(paper = "sink-window", check = "decode_matches_masked_dense", description = "the online softmax skips the rescale when the running maximum grows")
    @Breaks(paper = "sink-window", check = "short_stream_is_full_attention", description = "the online softmax skips the rescale when the running maximum grows")
    void aSoftmaxWithoutRescaleFailsDecodeAndShortStream() {
        SinkWindowCache.Attend noRescale = (q, keys, values, count) -> {
            double max = Double.NEGATIVE_INFINITY;
            double sum = 0;
            double[] out = new double[values[0].length];
            for (int j = 0; j < count; j++) {
                double logit = 0;
                for (int i = 0; i < q.length; i++) {
                    logit += q[i] * keys[j][i];
                }
                logit /= Math.sqrt(q.length);
                max = Math.max(max, logit);
                double p = Math.exp(logit - max); // earlier terms keep their old shift
                sum += p;
                for (int i = 0; i < out.length; i++) {
                    out[i] += p * values[j][i];
                }
            }
            for (int i = 0; i < out.length; i++) {
                out[i] /= sum;
            }
            return out;
        };
        SinkWindowProtocol.Trace broken = SinkWindowProtocol.run(42, noRescale);
        assertThat(holds("decode_matches_masked_dense", broken)).isFalse();
        assertThat(holds("short_stream_is_full_attention", broken)).isFalse();
    }

    @Test
    @Breaks(paper = "sink-window", check = "decode_matches_masked_dense", description = "decode attends over every slot, stale ones included, before the cache is full")
    void attendingOverEmptySlotsFailsDecode() {
        SinkWindowCache.Attend everySlot = (q, keys, values, count) -> SinkWindowCache.ONLINE_SOFTMAX.attend(q, keys, values, keys.length);
        assertThat(holds("decode_matches_masked_dense", SinkWindowProtocol.run(42, everySlot))).isFalse();
    }

    @Test
    @Breaks(paper = "sink-window", check = "stored_bytes_exact", description = "the cache keeps every token and masks the evicted ones at read time")
    void keepingEveryTokenFailsStoredBytes() {
        SinkWindowProtocol.Trace good = SinkWindowProtocol.run(42, SinkWindowCache.ONLINE_SOFTMAX);
        long everyToken = (long) good.keys().length * (good.keys()[0].length + good.values()[0].length) * Double.BYTES;
        assertThat(holds("stored_bytes_exact", Records.with(good, "storedBytes", everyToken))).isFalse();
    }
}
