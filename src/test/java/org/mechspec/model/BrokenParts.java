package org.mechspec.model;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.mechspec.compute.HalfFloat;
import org.mechspec.compute.Rng;

/**
 * Broken parts of the model, each handed in through a seam the mechanism has anyway (the RoPE the layers rotate
 * with, the optimizer, the attach / merge / write step a contract drives), or a broken intermediate handed to the
 * check (an analytic gradient, a forward record).
 */
final class BrokenParts {
    private BrokenParts() {
    }

    /** {@code model}'s weights in a model whose layers rotate q and k with {@code rope}. */
    static Qwen2Model withRope(Qwen2Model model, RotaryEmbedding rope) {
        Qwen2Model broken = new Qwen2Model(model.config(), model.precision(), rope);
        for (Parameter p : model.parameters()) {
            broken.parameter(p.name()).value().copyFrom(p.value());
        }
        return broken;
    }

    /** RoPE by −angle in the forward pass (and, consistently, +angle in backward). */
    static RotaryEmbedding signFlippedRope(Qwen2Config c) {
        HalfSplitRope real = new HalfSplitRope(c.headDim(), c.maxPositionEmbeddings(), c.ropeTheta());
        return (x, batch, seqLen, heads, direction) -> real.rotate(x, batch, seqLen, heads, -direction);
    }

    /** RoPE that always rotates forward: backward rotates the gradient by +angle instead of undoing it. */
    static RotaryEmbedding sameDirectionBackwardRope(Qwen2Config c) {
        HalfSplitRope real = new HalfSplitRope(c.headDim(), c.maxPositionEmbeddings(), c.ropeTheta());
        return (x, batch, seqLen, heads, direction) -> real.rotate(x, batch, seqLen, heads, 1);
    }

    /** The analytic gradients with every q projection's bias gradient left at zero, as if never accumulated. */
    static Map<String, Tensor> withoutQueryBiasGradient(Map<String, Tensor> gradients) {
        Map<String, Tensor> broken = new LinkedHashMap<>();
        gradients.forEach((name, g) -> broken.put(name,
                name.endsWith("q_proj.bias") ? Tensor.zeros(g.precision(), g.shape()) : g.copy()));
        return broken;
    }

    /**
     * The forward record with every adapter's dropped-out input replaced by the input itself: backward from it
     * gives A the gradient of the input before dropout (everything else as recorded).
     */
    static ForwardPass forgettingLoraDropout(Qwen2Model model, ForwardPass pass) {
        List<DecoderLayer.Pass> layers = new ArrayList<>();
        for (int l = 0; l < model.layerCount(); l++) {
            DecoderLayer.Pass p = pass.layerPass(l);
            layers.add(new DecoderLayer.Pass(p.activations(), p.norm1(), undropped(p.qPass()), undropped(p.kPass()),
                    undropped(p.vPass()), p.attentionGradient(), undropped(p.oPass()), p.middle(), p.norm2(),
                    p.gatePass(), p.upPass(), p.downPass()));
        }
        return new ForwardPass(model, pass.batch(), layers, pass.normPass(), pass.headPass());
    }

    private static Linear.Pass undropped(Linear.Pass p) {
        Tensor dropped = p.dropped() == null ? null : p.x();
        return new Linear.Pass(p.x(), p.y(), dropped, p.scaledU(), p.keep(), p.keepScale(), p.rows());
    }

    /** {@link Lora#attach}, then B drawn N(0, 0.02²) from the same RNG instead of left at zero. */
    static void attachWithRandomB(Qwen2Model model, LoraConfig config, Rng rng) {
        Lora.attach(model, config, rng);
        for (LoraAdapter a : model.loraAdapters()) {
            Tensor b = a.b().value();
            for (int i = 0; i < b.size(); i++) {
                b.set(i, Qwen2Model.INIT_STD * rng.normal());
            }
        }
    }

    /** {@link Lora#merge}, but the merged weights are W + B·A, without the α/r scale. */
    static void mergeWithoutScale(Qwen2Model model) {
        Lora.merge(model);
        for (Linear target : model.attentionProjections()) {
            Tensor w = target.weight.value();
            w.copyFrom(target.lora.unmergedBase);
            double[] delta = target.lora.delta(1.0);
            for (int i = 0; i < delta.length; i++) {
                w.set(i, w.get(i) + delta[i]);
            }
        }
    }

    /** AdamW handed −g: its moments see −g, so every update is the descent step negated, a climb. */
    static TrainingTest.Optimizer ascendingAdamW(List<Parameter> parameters) {
        AdamW adamw = AdamW.withoutWeightDecay(parameters);
        return lr -> {
            for (Parameter p : parameters) {
                Tensor g = p.grad();
                for (int j = 0; j < g.size(); j++) {
                    g.set(j, -g.get(j));
                }
            }
            adamw.step(lr);
        };
    }

    /** A safetensors file whose header declares F32 but whose values were rounded to bf16 first. */
    static void writeRoundedToBf16(Path file, List<SafeTensorsWriter.Named> tensors) throws IOException {
        List<SafeTensorsWriter.Named> rounded = new ArrayList<>();
        for (SafeTensorsWriter.Named n : tensors) {
            Tensor t = n.tensor().copy();
            for (int i = 0; i < t.size(); i++) {
                t.set(i, HalfFloat.roundToBfloat16(t.get(i)));
            }
            rounded.add(new SafeTensorsWriter.Named(n.name(), t));
        }
        SafeTensorsTest.F32.write(file, rounded);
    }
}
