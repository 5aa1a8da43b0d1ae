package org.mechspec.foldbias;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.mechspec.compute.Finite;
import org.mechspec.compute.Rng;
import org.mechspec.data.DataFiles;

/**
 * The synthetic inputs of one problem, row-major: reference queries [m, d], test queries [mt, d],
 * keys [n, d], values [n, d]. Validated on construction: shapes match the config, every value finite.
 */
public record FoldBiasInputs(FoldBiasConfig config, double[] referenceQueries, double[] testQueries, double[] keys,
                             double[] values) {

    public FoldBiasInputs {
        int d = config.d();
        requireLength("reference queries", referenceQueries, (long) config.referenceQueries() * d);
        requireLength("test queries", testQueries, (long) config.testQueries() * d);
        requireLength("keys", keys, (long) config.n() * d);
        requireLength("values", values, (long) config.n() * d);
        Finite.require("reference queries", referenceQueries);
        Finite.require("test queries", testQueries);
        Finite.require("keys", keys);
        Finite.require("values", values);
    }

    /**
     * protocols.md (fold-bias) draw order from one Rng(seed) stream: g ∈ R^d (μ = g); reference queries μ + spread·z;
     * test queries likewise; keys N(0,1); values N(0,1); every matrix row-major.
     */
    public static FoldBiasInputs draw(FoldBiasConfig c, long seed) {
        Rng rng = new Rng(seed);
        double[] mu = rng.normals(c.d(), 0.0, 1.0);
        double[] reference = queriesAround(rng, mu, c.referenceQueries(), c.querySpread());
        double[] test = queriesAround(rng, mu, c.testQueries(), c.querySpread());
        double[] keys = rng.normals(c.n() * c.d(), 0.0, 1.0);
        double[] values = rng.normals(c.n() * c.d(), 0.0, 1.0);
        return new FoldBiasInputs(c, reference, test, keys, values);
    }

    private static double[] queriesAround(Rng rng, double[] mu, int count, double spread) {
        int d = mu.length;
        double[] q = new double[count * d];
        for (int i = 0; i < count; i++) {
            for (int c = 0; c < d; c++) {
                q[i * d + c] = mu[c] + spread * rng.normal();
            }
        }
        return q;
    }

    /** SHA-256 of the inputs' bytes (little-endian doubles in the order drawn): the run's dataset fingerprint. */
    public String sha256() {
        int count = referenceQueries.length + testQueries.length + keys.length + values.length;
        ByteBuffer buf = ByteBuffer.allocate(count * Double.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (double[] a : new double[][] {referenceQueries, testQueries, keys, values}) {
            for (double x : a) {
                buf.putDouble(x);
            }
        }
        return DataFiles.sha256(buf.array());
    }

    private static void requireLength(String name, double[] a, long expected) {
        if (a == null) {
            throw new IllegalArgumentException(name + " is null");
        }
        if (a.length != expected) {
            throw new IllegalArgumentException(name + " has " + a.length + " elements, the config needs " + expected);
        }
    }
}
