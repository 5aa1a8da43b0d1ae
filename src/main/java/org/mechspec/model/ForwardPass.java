package org.mechspec.model;

import java.util.List;

/**
 * One forward pass of a {@link Qwen2Model}: logits [batch·seqLen, vocab], every layer's activations, and what the
 * explicit backward needs. {@link #backward()} differentiates the mean next-token NLL of the batch's targets.
 */
public final class ForwardPass {
    private final Qwen2Model model;
    private final Batch batch;
    private final List<DecoderLayer.Pass> layers;
    private final RmsNorm.Pass norm;
    private final Linear.Pass head;

    ForwardPass(Qwen2Model model, Batch batch, List<DecoderLayer.Pass> layers, RmsNorm.Pass norm, Linear.Pass head) {
        this.model = model;
        this.batch = batch;
        this.layers = layers;
        this.norm = norm;
        this.head = head;
    }

    public Batch batch() {
        return batch;
    }

    public Tensor logits() {
        return head.y();
    }

    /** Activations of decoder layer {@code index}. */
    public LayerActivations layer(int index) {
        return layers.get(index).activations();
    }

    /** Per-position NLL of the targets (NaN where a target is ignored). */
    public double[] tokenNll() {
        return CrossEntropy.tokenNll(logits(), requireTargets(), model.config().vocabSize());
    }

    /** Mean NLL over the counted targets. */
    public double loss() {
        double sum = 0.0;
        int n = 0;
        for (double v : tokenNll()) {
            if (!Double.isNaN(v)) {
                sum += v;
                n++;
            }
        }
        if (n == 0) {
            throw new IllegalArgumentException("every target is ignored: the loss has no terms");
        }
        return sum / n;
    }

    /** Accumulates ∂(mean NLL)/∂θ into every trainable parameter's gradient. */
    public void backward() {
        model.backward(this, CrossEntropy.backward(logits(), requireTargets(), model.config().vocabSize()));
    }

    DecoderLayer.Pass layerPass(int index) {
        return layers.get(index);
    }

    RmsNorm.Pass normPass() {
        return norm;
    }

    Linear.Pass headPass() {
        return head;
    }

    /** Non-finite logits are a bug upstream: name the first layer whose output went non-finite. */
    void requireFinite() {
        int bad = logits().firstNonFinite();
        if (bad < 0) {
            return;
        }
        for (int l = 0; l < layers.size(); l++) {
            int at = layers.get(l).activations().output().firstNonFinite();
            if (at >= 0) {
                throw new NonFiniteActivationException("layer " + l + " output element " + at + " is "
                        + layers.get(l).activations().output().get(at) + " (attention block "
                        + model.attention(l).getClass().getSimpleName() + ")");
            }
        }
        throw new NonFiniteActivationException("logit element " + bad + " is " + logits().get(bad));
    }

    private int[] requireTargets() {
        if (batch.targets() == null) {
            throw new IllegalStateException("the batch has no targets");
        }
        return batch.targets();
    }

    /** Activations that are NaN or infinite. */
    public static final class NonFiniteActivationException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        NonFiniteActivationException(String message) {
            super("non-finite activations: " + message);
        }
    }
}
