package org.mechspec.model;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.mechspec.compute.Rng;

/**
 * A Qwen2-architecture causal language model on the CPU: token embedding, decoder layers, final RMSNorm, tied or
 * untied head. Parameters carry Hugging Face names. {@link #forward} runs the model and keeps the activations;
 * {@link ForwardPass#backward} accumulates gradients into the trainable parameters (explicit, per layer).
 */
public final class Qwen2Model {
    /** Hugging Face's initializer_range default. */
    public static final double INIT_STD = 0.02;

    private final Qwen2Config config;
    private final Precision precision;
    private final Map<String, Parameter> base = new LinkedHashMap<>();
    private final Parameter embed;
    private final List<DecoderLayer> layers = new ArrayList<>();
    private final RmsNorm finalNorm;
    private final Linear head;
    private final RotaryEmbedding rope;

    private Qwen2Model(Qwen2Config config, Precision precision) {
        this(config, precision, new HalfSplitRope(config.headDim(), config.maxPositionEmbeddings(), config.ropeTheta()));
    }

    /** All weights zero, over {@code rope}: the rotation the layers apply to q and k, and undo on their gradients. */
    Qwen2Model(Qwen2Config config, Precision precision, RotaryEmbedding rope) {
        this(config, precision, rope, (name, shape) -> new Parameter(name, Tensor.zeros(precision, shape), true));
    }

    /**
     * The architecture over parameters from {@code parameters} (Hugging Face name, shape → parameter), asked once
     * per base tensor in Hugging Face order: zero tensors for a fresh model, the source's for {@link #copy}, so a
     * copy allocates nothing for the tensors it shares.
     */
    private Qwen2Model(Qwen2Config config, Precision precision, RotaryEmbedding rope,
                       BiFunction<String, int[], Parameter> parameters) {
        this.config = config;
        this.precision = precision;
        this.rope = rope;
        int hidden = config.hiddenSize();
        embed = add(parameters, "model.embed_tokens.weight", config.vocabSize(), hidden);
        for (int l = 0; l < config.numHiddenLayers(); l++) {
            String p = "model.layers." + l + ".";
            Linear q = linear(parameters, p + "self_attn.q_proj", config.queryDim(), hidden, true);
            Linear k = linear(parameters, p + "self_attn.k_proj", config.kvDim(), hidden, true);
            Linear v = linear(parameters, p + "self_attn.v_proj", config.kvDim(), hidden, true);
            Linear o = linear(parameters, p + "self_attn.o_proj", hidden, config.queryDim(), false);
            Linear gate = linear(parameters, p + "mlp.gate_proj", config.intermediateSize(), hidden, false);
            Linear up = linear(parameters, p + "mlp.up_proj", config.intermediateSize(), hidden, false);
            Linear down = linear(parameters, p + "mlp.down_proj", hidden, config.intermediateSize(), false);
            RmsNorm n1 = new RmsNorm(add(parameters, p + "input_layernorm.weight", hidden), config.rmsNormEps());
            RmsNorm n2 = new RmsNorm(add(parameters, p + "post_attention_layernorm.weight", hidden),
                    config.rmsNormEps());
            layers.add(new DecoderLayer(l, n1, n2, q, k, v, o, gate, up, down));
        }
        finalNorm = new RmsNorm(add(parameters, "model.norm.weight", hidden), config.rmsNormEps());
        Parameter headWeight = config.tieWordEmbeddings() ? embed
                : add(parameters, "lm_head.weight", config.vocabSize(), hidden);
        head = new Linear("lm_head", headWeight, null);
    }

    /** All weights zero (norm weights too): the shell a checkpoint is loaded into. */
    public static Qwen2Model zeros(Qwen2Config config, Precision precision) {
        return new Qwen2Model(config, precision);
    }

    /**
     * Hugging Face's initialization: every matrix (embedding, projections, untied head) N(0, std²), biases zero,
     * norm weights one. Matrices are drawn in {@link #parameters()} order, each row-major, from {@code rng}.
     */
    public static Qwen2Model initialized(Qwen2Config config, Precision precision, Rng rng, double std) {
        Qwen2Model m = new Qwen2Model(config, precision);
        for (Parameter p : m.parameters()) {
            Tensor t = p.value();
            if (p.name().endsWith("norm.weight")) {
                t.fill(1.0);
            } else if (t.shape().length == 2) {
                for (int i = 0; i < t.size(); i++) {
                    t.set(i, std * rng.normal());
                }
            }
        }
        return m;
    }

    public Qwen2Config config() {
        return config;
    }

    public Precision precision() {
        return precision;
    }

    public int layerCount() {
        return layers.size();
    }

    /**
     * The model's own parameters in Hugging Face order (embedding; per layer q/k/v/o, the attention block's
     * parameters if any, gate/up/down, the two norms; final norm; untied head). LoRA tensors are not included.
     */
    public List<Parameter> parameters() {
        List<Parameter> out = new ArrayList<>();
        for (Parameter p : base.values()) {
            out.add(p);
            if (p.name().endsWith("self_attn.o_proj.weight")) {
                out.addAll(layers.get(layerIndex(p.name())).attention.parameters());
            }
        }
        return out;
    }

    /** A parameter by Hugging Face name (also LoRA and attention-block tensors). */
    public Parameter parameter(String name) {
        for (Parameter p : parameters()) {
            if (p.name().equals(name)) {
                return p;
            }
        }
        for (Parameter p : loraParameters()) {
            if (p.name().equals(name)) {
                return p;
            }
        }
        throw new IllegalArgumentException("no parameter named " + name);
    }

    /** LoRA tensors, adapter by adapter (layer order; q, k, v, o), A then B. */
    public List<Parameter> loraParameters() {
        List<Parameter> out = new ArrayList<>();
        for (LoraAdapter a : loraAdapters()) {
            out.add(a.a());
            out.add(a.b());
        }
        return out;
    }

    public List<LoraAdapter> loraAdapters() {
        List<LoraAdapter> out = new ArrayList<>();
        for (Linear l : attentionProjections()) {
            if (l.lora != null) {
                out.add(l.lora);
            }
        }
        return out;
    }

    /** Every parameter a backward pass gives a gradient to: the trainable base, block and LoRA tensors. */
    public List<Parameter> trainableParameters() {
        List<Parameter> out = new ArrayList<>();
        for (Parameter p : parameters()) {
            if (p.trainable()) {
                out.add(p);
            }
        }
        for (Parameter p : loraParameters()) {
            if (p.trainable()) {
                out.add(p);
            }
        }
        return out;
    }

    /** Sets every base parameter (not LoRA) trainable or frozen. */
    public void setBaseTrainable(boolean trainable) {
        for (Parameter p : parameters()) {
            p.setTrainable(trainable);
        }
    }

    public void zeroGrad() {
        for (Parameter p : trainableParameters()) {
            p.zeroGrad();
        }
    }

    public AttentionBlock attention(int layer) {
        return layers.get(checkLayer(layer)).attention;
    }

    /** Replaces one layer's attention core; its projections, RoPE and LoRA adapters stay. */
    public void setAttention(int layer, AttentionBlock block) {
        if (block == null) {
            throw new IllegalArgumentException("attention block of layer " + layer + " must not be null");
        }
        layers.get(checkLayer(layer)).attention = block;
    }

    public ForwardPass forward(Batch batch) {
        return forward(batch, null);
    }

    /** Runs the model; {@code masks} (LoRA dropout of one training step) may be null for no dropout. */
    public ForwardPass forward(Batch batch, DropoutMasks masks) {
        int rows = batch.batch() * batch.seqLen();
        int hidden = config.hiddenSize();
        HeadLayout layout = new HeadLayout(batch.batch(), batch.seqLen(), config.numAttentionHeads(),
                config.numKeyValueHeads(), config.headDim());
        Tensor x = Tensor.zeros(precision, rows, hidden);
        int[] inputs = batch.inputs();
        for (int r = 0; r < rows; r++) {
            int token = inputs[r];
            if (token < 0 || token >= config.vocabSize()) {
                throw new IllegalArgumentException("input token " + token + " at position " + r
                        + " is outside the vocabulary of " + config.vocabSize());
            }
            for (int c = 0; c < hidden; c++) {
                x.set(r * hidden + c, embed.value().get(token * hidden + c));
            }
        }
        List<DecoderLayer.Pass> passes = new ArrayList<>(layers.size());
        for (DecoderLayer layer : layers) {
            DecoderLayer.Pass p = layer.forward(x, layout, rope, masks);
            passes.add(p);
            x = p.activations().output();
        }
        RmsNorm.Pass norm = finalNorm.forward(x, rows);
        Linear.Pass logits = head.forward(norm.y(), rows, null);
        ForwardPass pass = new ForwardPass(this, batch, passes, norm, logits);
        pass.requireFinite();
        return pass;
    }

    /** Backward through head, final norm, layers and embedding (called by {@link ForwardPass#backward}). */
    void backward(ForwardPass pass, Tensor dLogits) {
        int rows = pass.batch().batch() * pass.batch().seqLen();
        int hidden = config.hiddenSize();
        Tensor dNorm = Tensor.zeros(precision, rows, hidden);
        head.backward(pass.headPass(), dLogits, dNorm);
        Tensor dx = finalNorm.backward(pass.normPass(), dNorm);
        for (int l = layers.size() - 1; l >= 0; l--) {
            dx = layers.get(l).backward(pass.layerPass(l), dx, rope);
        }
        if (embed.trainable()) {
            Tensor dEmbed = embed.grad();
            int[] inputs = pass.batch().inputs();
            for (int r = 0; r < rows; r++) {
                for (int c = 0; c < hidden; c++) {
                    dEmbed.add(inputs[r] * hidden + c, dx.get(r * hidden + c));
                }
            }
        }
    }

    /**
     * An independent copy: trainable base parameters are deep-copied (gradients too); frozen ones share their
     * tensors with this model, as nothing writes into a frozen tensor (unfreezing and {@link Lora#merge} take a
     * private tensor first), so copies of a frozen base cost no weight memory. LoRA adapters (merged state
     * included) and attention blocks are copied; the RoPE is shared. The tied head stays tied.
     */
    public Qwen2Model copy() {
        Qwen2Model m = new Qwen2Model(config, precision, rope, (name, shape) -> {
            Parameter mine = base.get(name);
            return mine.trainable() ? mine.copy() : mine.share();
        });
        List<Linear> mine = attentionProjections();
        List<Linear> theirs = m.attentionProjections();
        for (int i = 0; i < mine.size(); i++) {
            theirs.get(i).lora = mine.get(i).lora == null ? null : mine.get(i).lora.copy();
        }
        for (int l = 0; l < layers.size(); l++) {
            m.layers.get(l).attention = layers.get(l).attention.copy();
        }
        return m;
    }

    /** The LoRA targets in adapter order: per layer q, k, v, o. */
    List<Linear> attentionProjections() {
        List<Linear> out = new ArrayList<>();
        for (DecoderLayer l : layers) {
            out.add(l.q);
            out.add(l.k);
            out.add(l.v);
            out.add(l.o);
        }
        return out;
    }

    private Parameter add(BiFunction<String, int[], Parameter> parameters, String name, int... shape) {
        Parameter p = parameters.apply(name, shape);
        if (!p.name().equals(name) || !p.value().hasShape(shape) || p.value().precision() != precision) {
            throw new IllegalStateException(name + " needs " + precision + Arrays.toString(shape) + ", got " + p);
        }
        base.put(name, p);
        return p;
    }

    private Linear linear(BiFunction<String, int[], Parameter> parameters, String name, int out, int in,
                          boolean bias) {
        Parameter w = add(parameters, name + ".weight", out, in);
        Parameter b = bias ? add(parameters, name + ".bias", out) : null;
        return new Linear(name, w, b);
    }

    private int checkLayer(int layer) {
        if (layer < 0 || layer >= layers.size()) {
            throw new IllegalArgumentException("layer " + layer + " does not exist (the model has " + layers.size()
                    + " layers)");
        }
        return layer;
    }

    private static int layerIndex(String name) {
        String rest = name.substring("model.layers.".length());
        return Integer.parseInt(rest.substring(0, rest.indexOf('.')));
    }
}
