package org.mechspec.model;

import java.util.ArrayList;
import java.util.List;
import org.mechspec.compute.Rng;

/** Small configs and inputs for the model's contracts. */
final class TinyModels {
    private TinyModels() {
    }

    /** 2 layers, hidden 16, 4 query heads of dim 4 over 2 KV heads, vocab 11. */
    static Qwen2Config config(boolean tied) {
        return new Qwen2Config(11, 16, 24, 2, 4, 2, 16, 10000.0, 1e-6, tied);
    }

    /**
     * A model whose every tensor is random (norm weights near one, biases non-zero), so no gradient is trivially
     * zero by symmetry.
     */
    static Qwen2Model randomModel(Qwen2Config config, Precision precision, long seed) {
        Rng rng = new Rng(seed);
        Qwen2Model m = Qwen2Model.initialized(config, precision, rng, 0.3);
        for (Parameter p : m.parameters()) {
            if (p.value().shape().length == 1) {
                boolean norm = p.name().endsWith("norm.weight");
                for (int i = 0; i < p.value().size(); i++) {
                    p.value().set(i, (norm ? 1.0 : 0.0) + 0.2 * rng.normal());
                }
            }
        }
        return m;
    }

    /** {@code batch} random sequences of {@code seqLen} tokens; one target ignored. */
    static Batch randomBatch(Qwen2Config config, int batch, int seqLen, long seed) {
        Rng rng = new Rng(seed);
        int[] in = new int[batch * seqLen];
        int[] tg = new int[batch * seqLen];
        for (int i = 0; i < in.length; i++) {
            in[i] = (int) (rng.uniform() * config.vocabSize());
            tg[i] = (int) (rng.uniform() * config.vocabSize());
        }
        tg[1] = Batch.IGNORE;
        return new Batch(in, tg, batch, seqLen);
    }

    /** Names of the base parameters whose values differ in any bit between the two models (empty: identical). */
    static List<String> differingParameters(Qwen2Model a, Qwen2Model b) {
        List<String> out = new ArrayList<>();
        for (Parameter p : a.parameters()) {
            if (!b.parameter(p.name()).value().bitEquals(p.value())) {
                out.add(p.name());
            }
        }
        return out;
    }
}
