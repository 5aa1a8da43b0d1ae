package org.mechspec.foldbias;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mechspec.compute.Rng;

/**
 * FoldBiasInputs.draw follows protocols.md (fold-bias)'s draw order, recomputed here from one Rng(seed) stream: g ∈ R^d (μ = g),
 * reference queries μ + spread·z, test queries likewise, keys N(0, 1), values N(0, 1), all row-major. The
 * fingerprint is the SHA-256 of those doubles, little-endian, in that order.
 */
@Tag("fold-bias")
class DrawOrderTest {
    /** The stream read in protocols.md (fold-bias)'s order; every value compared bit for bit. */
    @Test
    void drawReadsOneStreamInTheDesignOrder() {
        FoldBiasConfig c = new FoldBiasConfig(3, 5, 2, 4, 2, 0.5, 1e-3);
        long seed = 7;
        Rng rng = new Rng(seed);
        double[] mu = new double[3];
        for (int k = 0; k < 3; k++) {
            mu[k] = rng.normal();
        }
        double[] reference = new double[4 * 3];
        for (int i = 0; i < reference.length; i++) {
            reference[i] = mu[i % 3] + 0.5 * rng.normal();
        }
        double[] test = new double[2 * 3];
        for (int i = 0; i < test.length; i++) {
            test[i] = mu[i % 3] + 0.5 * rng.normal();
        }
        double[] keys = new double[5 * 3];
        for (int i = 0; i < keys.length; i++) {
            keys[i] = rng.normal();
        }
        double[] values = new double[5 * 3];
        for (int i = 0; i < values.length; i++) {
            values[i] = rng.normal();
        }

        FoldBiasInputs in = FoldBiasInputs.draw(c, seed);
        assertThat(in.referenceQueries()).containsExactly(reference);
        assertThat(in.testQueries()).containsExactly(test);
        assertThat(in.keys()).containsExactly(keys);
        assertThat(in.values()).containsExactly(values);
    }

    @Test
    void sha256HashesTheDrawnDoublesLittleEndianInOrder() throws Exception {
        FoldBiasInputs in = FoldBiasInputs.draw(new FoldBiasConfig(3, 5, 2, 4, 2, 0.5, 1e-3), 7);
        ByteBuffer buf = ByteBuffer.allocate((12 + 6 + 15 + 15) * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (double[] a : new double[][] {in.referenceQueries(), in.testQueries(), in.keys(), in.values()}) {
            for (double x : a) {
                buf.putDouble(x);
            }
        }
        String expected = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(buf.array()));
        assertThat(in.sha256()).isEqualTo(expected);
    }

    /** The protocol's seed-42 fingerprint as recorded in reports/fold-bias.cpu.json (datasets). */
    @Test
    void protocolFingerprintMatchesTheRecordedReport() {
        assertThat(FoldBiasInputs.draw(FoldBiasConfig.PROTOCOL, 42).sha256())
                .isEqualTo("ffdd7730ec12951004704db43bdb2e2e5115df2b02f5fdd0c27c1bb4876bd1b6");
    }
}
