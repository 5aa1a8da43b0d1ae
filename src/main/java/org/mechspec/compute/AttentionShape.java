package org.mechspec.compute;

/**
 * Shape of a batched grouped-query attention call. Layouts (row-major):
 * q [batch, queryHeads, queryLen, headDim], k [batch, kvHeads, keyLen, headDim],
 * v [batch, kvHeads, keyLen, valueDim], optional additive bias [batch, kvHeads, keyLen],
 * out [batch, queryHeads, queryLen, valueDim]. Query head h reads KV head h / (queryHeads / kvHeads).
 * Causal: query i sees key j iff j ≤ i + (keyLen − queryLen), i.e. the queries are the last ones.
 */
public record AttentionShape(int batch, int queryHeads, int kvHeads, int queryLen, int keyLen, int headDim,
                             int valueDim, double scale, boolean causal) {

    /** Checks the dimensions: every one positive and the query heads a multiple of the KV heads. */
    public AttentionShape {
        requirePositive("batch", batch);
        requirePositive("queryHeads", queryHeads);
        requirePositive("kvHeads", kvHeads);
        requirePositive("queryLen", queryLen);
        requirePositive("keyLen", keyLen);
        requirePositive("headDim", headDim);
        requirePositive("valueDim", valueDim);
        if (queryHeads % kvHeads != 0) {
            throw new IllegalArgumentException("queryHeads (" + queryHeads + ") must be a multiple of kvHeads (" + kvHeads + ")");
        }
        if (causal && keyLen < queryLen) {
            throw new IllegalArgumentException("causal attention needs keyLen (" + keyLen + ") >= queryLen (" + queryLen + ")");
        }
        if (!(scale > 0) || Double.isInfinite(scale)) {
            throw new IllegalArgumentException("scale must be positive and finite, got " + scale);
        }
    }

    /** Plain multi-head shape with scale 1/√headDim. */
    public static AttentionShape of(int batch, int queryHeads, int kvHeads, int queryLen, int keyLen, int headDim,
                                    int valueDim, boolean causal) {
        return new AttentionShape(batch, queryHeads, kvHeads, queryLen, keyLen, headDim, valueDim,
                1.0 / Math.sqrt(headDim), causal);
    }

    /** Numbers in q: batch × query heads × queries × head dim. */
    public long queryElements() {
        return (long) batch * queryHeads * queryLen * headDim;
    }

    /** Numbers in k: batch × KV heads × keys × head dim. */
    public long keyElements() {
        return (long) batch * kvHeads * keyLen * headDim;
    }

    /** Numbers in v: batch × KV heads × keys × value dim. */
    public long valueElements() {
        return (long) batch * kvHeads * keyLen * valueDim;
    }

    /** Numbers in the additive bias: batch × query heads × queries × keys. */
    public long biasElements() {
        return (long) batch * kvHeads * keyLen;
    }

    /** Numbers in the output: batch × query heads × queries × value dim. */
    public long outputElements() {
        return (long) batch * queryHeads * queryLen * valueDim;
    }

    /** Last key index (inclusive) that query i may see. */
    public int lastVisibleKey(int i) {
        return causal ? i + (keyLen - queryLen) : keyLen - 1;
    }

    /**
     * The inputs of one attention call, as every backend takes them: lengths this shape needs, then every element
     * finite; throws naming the offending input ({@code bias} may be null).
     */
    public void requireInputs(double[] q, double[] k, double[] v, double[] bias) {
        validate(q.length, k.length, v.length, bias == null ? 0 : bias.length, bias != null);
        Finite.require("q", q);
        Finite.require("k", k);
        Finite.require("v", v);
        if (bias != null) {
            Finite.require("bias", bias);
        }
    }

    /** {@link #requireInputs(double[], double[], double[], double[])} for fp32 inputs. */
    public void requireInputs(float[] q, float[] k, float[] v, float[] bias) {
        validate(q.length, k.length, v.length, bias == null ? 0 : bias.length, bias != null);
        Finite.require("q", q);
        Finite.require("k", k);
        Finite.require("v", v);
        if (bias != null) {
            Finite.require("bias", bias);
        }
    }

    /** Checks array lengths against this shape; throws naming the offending input. */
    public void validate(int qLen, int kLen, int vLen, int biasLen, boolean hasBias) {
        requireLength("q", qLen, queryElements());
        requireLength("k", kLen, keyElements());
        requireLength("v", vLen, valueElements());
        if (hasBias) {
            requireLength("bias", biasLen, biasElements());
        }
    }

    private static void requireLength(String name, long actual, long expected) {
        if (actual != expected) {
            throw new IllegalArgumentException(name + " has " + actual + " elements, shape needs " + expected);
        }
    }

    private static void requirePositive(String name, int v) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + " must be positive, got " + v);
        }
    }
}
