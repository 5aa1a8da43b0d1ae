package org.mechspec.model;

import java.util.List;
import org.mechspec.compute.Rng;

/**
 * LoRA on the q, k, v and o projections of every layer: attach (A ~ N(0, 1/in_features) from the pinned RNG,
 * B = 0, base frozen), merge / unmerge, and parameter_delta_l2 = √(Σ‖(α/r)·B·A‖²_F).
 */
public final class Lora {
    private Lora() {
    }

    /**
     * Freezes every base parameter and gives each attention projection an adapter. A matrices are drawn from
     * {@code rng} adapter by adapter (layer 0..L−1; q, k, v, o), each [r, in] row-major; B starts at zero.
     */
    public static List<LoraAdapter> attach(Qwen2Model model, LoraConfig config, Rng rng) {
        if (!model.loraAdapters().isEmpty()) {
            throw new IllegalStateException("the model already has LoRA adapters");
        }
        model.setBaseTrainable(false);
        Precision precision = model.precision();
        for (Linear target : model.attentionProjections()) {
            int rank = config.rank();
            double std = 1.0 / Math.sqrt(target.in);
            Tensor a = Tensor.zeros(precision, rank, target.in);
            for (int i = 0; i < a.size(); i++) {
                a.set(i, std * rng.normal());
            }
            Tensor b = Tensor.zeros(precision, target.out, rank);
            target.lora = new LoraAdapter(target.name, new Parameter(target.name + ".lora_A.weight", a, true),
                    new Parameter(target.name + ".lora_B.weight", b, true), config);
        }
        return model.loraAdapters();
    }

    /**
     * Folds every adapter into its base weight (W ← W + (α/r)·B·A). Copy-on-write: the weight becomes a new tensor
     * and W itself, untouched, is kept aside for {@link #unmerge}, since W may be shared with other model copies.
     */
    public static void merge(Qwen2Model model) {
        for (Linear target : model.attentionProjections()) {
            LoraAdapter adapter = requireAdapter(target);
            if (adapter.merged()) {
                throw new IllegalStateException(target.name + " is already merged");
            }
            double[] delta = adapter.delta();
            Tensor w = target.weight.value();
            Tensor merged = Tensor.zeros(w.precision(), w.shape());
            for (int i = 0; i < delta.length; i++) {
                merged.set(i, w.get(i) + delta[i]);
            }
            adapter.unmergedBase = w;
            target.weight.replaceValue(merged, false);
        }
    }

    /** Puts every base weight's tensor from before {@link #merge} back (the very tensor, so bit for bit). */
    public static void unmerge(Qwen2Model model) {
        for (Linear target : model.attentionProjections()) {
            LoraAdapter adapter = requireAdapter(target);
            if (!adapter.merged()) {
                throw new IllegalStateException(target.name + " is not merged");
            }
            // W may be shared with other copies (it was before the merge, or still is).
            target.weight.replaceValue(adapter.unmergedBase, true);
            adapter.unmergedBase = null;
        }
    }

    /** √(Σ over adapters of ‖(α/r)·B·A‖²_F), in double. */
    public static double parameterDeltaL2(Qwen2Model model) {
        double sum = 0.0;
        for (LoraAdapter adapter : model.loraAdapters()) {
            for (double d : adapter.delta()) {
                sum += d * d;
            }
        }
        return Math.sqrt(sum);
    }

    /** Number of trainable LoRA scalars. */
    public static long trainableCount(Qwen2Model model) {
        long n = 0;
        for (Parameter p : model.loraParameters()) {
            n += p.trainable() ? p.value().size() : 0;
        }
        return n;
    }

    private static LoraAdapter requireAdapter(Linear target) {
        if (target.lora == null) {
            throw new IllegalStateException(target.name + " has no LoRA adapter");
        }
        return target.lora;
    }
}
