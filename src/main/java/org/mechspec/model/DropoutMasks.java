package org.mechspec.model;

import java.util.LinkedHashMap;
import java.util.Map;
import org.mechspec.compute.Rng;

/**
 * The LoRA dropout masks of one training step: for every adapter, in model order (layer 0..L−1, q, k, v, o), a
 * keep flag per input element [rows, in], drawn row-major as {@code uniform() ≥ p}. Kept inputs are scaled by
 * 1/(1−p). Drawing them once and passing the same object to two models gives both identical masks.
 */
public final class DropoutMasks {
    private final int rows;
    private final double probability;
    private final Map<String, boolean[]> keep;

    private DropoutMasks(int rows, double probability, Map<String, boolean[]> keep) {
        this.rows = rows;
        this.probability = probability;
        this.keep = keep;
    }

    /** Draws masks for {@code rows} input rows of every adapter of {@code model}, in model order. */
    public static DropoutMasks draw(Qwen2Model model, int rows, Rng rng) {
        Map<String, boolean[]> keep = new LinkedHashMap<>();
        double p = -1;
        for (LoraAdapter adapter : model.loraAdapters()) {
            p = adapter.config().dropout();
            int in = adapter.a().value().dim(1);
            boolean[] mask = new boolean[rows * in];
            for (int i = 0; i < mask.length; i++) {
                mask[i] = rng.uniform() >= p;
            }
            keep.put(adapter.target(), mask);
        }
        if (keep.isEmpty()) {
            throw new IllegalStateException("the model has no LoRA adapters to draw dropout masks for");
        }
        return new DropoutMasks(rows, p, keep);
    }

    public int rows() {
        return rows;
    }

    public double probability() {
        return probability;
    }

    /** Keep flags for the named projection ([rows, in]); throws when this step has none for it. */
    boolean[] keep(String target, int expectedRows) {
        boolean[] mask = keep.get(target);
        if (mask == null) {
            throw new IllegalArgumentException("no dropout mask for " + target);
        }
        if (expectedRows != rows) {
            throw new IllegalArgumentException("dropout masks were drawn for " + rows + " rows, the batch has "
                    + expectedRows);
        }
        return mask;
    }

    double keepScale() {
        return 1.0 / (1.0 - probability);
    }
}
