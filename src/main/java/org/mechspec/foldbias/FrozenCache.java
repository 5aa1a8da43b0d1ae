package org.mechspec.foldbias;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.mechspec.compute.Backend;
import org.mechspec.data.DataFiles;

/**
 * The deployed compact cache: fp16-valued folded keys K_h and refit values C_v', read through the plain
 * (no-bias) attention path. Immutable; {@link #sha256()} hashes its bytes afresh on every call, so a change
 * between freezing and after online use would show.
 */
public final class FrozenCache {
    private final double[] keys;
    private final double[] values;
    private final int size;
    private final int d;

    private FrozenCache(double[] keys, double[] values, int size, int d) {
        this.keys = keys.clone();
        this.values = values.clone();
        this.size = size;
        this.d = d;
    }

    static FrozenCache freeze(double[] keys, double[] values, int size, int d) {
        if (keys.length != size * d || values.length != size * d) {
            throw new IllegalArgumentException("frozen cache needs keys and values of " + size + "x" + d);
        }
        return new FrozenCache(keys, values, size, d);
    }

    /** softmax(q·K_hᵀ/√d)·C_v' for queries [count, d], through the backend's no-bias path. */
    public double[] attend(Backend backend, double[] queries, int count) {
        return AttentionOps.output(backend, queries, count, keys, size, d, values, d, null);
    }

    /** The cache's bytes: size and d as little-endian ints, then keys and values as little-endian doubles. */
    public byte[] bytes() {
        ByteBuffer buf = ByteBuffer.allocate(2 * Integer.BYTES + (keys.length + values.length) * Double.BYTES)
                .order(ByteOrder.LITTLE_ENDIAN);
        buf.putInt(size).putInt(d);
        for (double k : keys) {
            buf.putDouble(k);
        }
        for (double v : values) {
            buf.putDouble(v);
        }
        return buf.array();
    }

    public String sha256() {
        return DataFiles.sha256(bytes());
    }
}
