package org.mechspec.pnmix;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.OneBitLevels;

/** Every bad configuration value is rejected before a cache is built, naming the field. */
class PnMixConfigTest {

    /** The constructor's arguments, starting from a small valid configuration. */
    private static final class Args {
        int vocab = 256;
        int modelDim = 16;
        int queryHeads = 4;
        int kvHeads = 2;
        int headDim = 8;
        double ropeTheta = 10000.0;
        int sinkTokens = 2;
        int groupSize = 4;
        int residualSize = 8;
        int highBits = 3;
        int lowBits = 1;
        int valueBits = 2;
        int valueGroupSize = 4;
        int prefillTokens = 12;
        int decodeTokens = 4;

        PnMixConfig build() {
            return new PnMixConfig(new PnMixConfig.Model(vocab, modelDim, queryHeads, kvHeads, headDim, ropeTheta, PairLayout.ADJACENT),
                new PnMixConfig.CachePolicy(sinkTokens, groupSize, residualSize, 0.5, highBits, lowBits, valueBits, valueGroupSize, OneBitLevels.CONDITIONAL_MEANS), new PnMixConfig.Tokens(prefillTokens, decodeTokens));
        }
    }

    private static PnMixConfig with(Consumer<Args> change) {
        Args a = new Args();
        change.accept(a);
        return a.build();
    }

    private static void rejects(Consumer<Args> change, String message) {
        assertThatThrownBy(() -> with(change)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(message);
    }

    @Test
    void theBaseArgumentsAreValid() {
        PnMixConfig c = with(a -> { });
        assertThat(c.model().kvChannels()).isEqualTo(16);
        assertThat(c.totalTokens()).isEqualTo(16);
    }

    @Test
    void nonPositiveSizesAreRejectedByName() {
        rejects(a -> a.vocab = 0, "vocab must be positive, got 0");
        rejects(a -> a.modelDim = 0, "modelDim must be positive");
        rejects(a -> a.queryHeads = 0, "queryHeads must be positive");
        rejects(a -> a.kvHeads = 0, "kvHeads must be positive");
        rejects(a -> a.headDim = -2, "headDim must be positive");
        rejects(a -> a.groupSize = 0, "groupSize must be positive");
        rejects(a -> a.residualSize = 0, "residualSize must be positive");
        rejects(a -> a.valueGroupSize = 0, "valueGroupSize must be positive");
        rejects(a -> a.prefillTokens = 0, "prefillTokens must be positive");
    }

    @Test
    void negativeSinkOrDecodeCountsAreRejected() {
        rejects(a -> a.sinkTokens = -1, "sinkTokens must not be negative, got -1");
        rejects(a -> a.decodeTokens = -1, "decodeTokens must not be negative, got -1");
        assertThat(with(a -> a.decodeTokens = 0).tokens().decode()).isZero();
        assertThat(with(a -> a.sinkTokens = 0).cache().sinkTokens()).isZero();
    }

    @Test
    void headShapesMustFormGroupsAndPairs() {
        rejects(a -> a.queryHeads = 3, "queryHeads (3) must be a multiple of kvHeads (2)");
        rejects(a -> {
            a.headDim = 7;
            a.valueGroupSize = 7;
        }, "headDim must be even");
    }

    @Test
    void ropeThetaMustBeFiniteAndAboveOne() {
        rejects(a -> a.ropeTheta = 1.0, "ropeTheta must be finite and > 1");
        rejects(a -> a.ropeTheta = Double.POSITIVE_INFINITY, "ropeTheta");
        rejects(a -> a.ropeTheta = Double.NaN, "ropeTheta");
        assertThat(with(a -> a.ropeTheta = Math.nextUp(1.0)).model().ropeTheta()).isGreaterThan(1.0);
    }

    @Test
    void valueBitsMustBeOneToEight() {
        rejects(a -> a.valueBits = 0, "valueBits must be 1..8 bits, got 0");
        rejects(a -> a.valueBits = 9, "valueBits must be 1..8 bits, got 9");
    }

    @Test
    void prefillMustHaveTokensAfterTheSinks() {
        rejects(a -> a.prefillTokens = 2, "prefillTokens 2 <= sinkTokens 2");
        assertThat(with(a -> a.prefillTokens = 3).tokens().prefill()).isEqualTo(3);
    }
}
