package org.mechspec.model;

import java.util.List;

/**
 * The token-mixing core of one self-attention layer: from post-RoPE queries, keys and values to the output that
 * o_proj reads ({@link HeadLayout} layouts). The model's layers default to {@link SoftmaxAttention}; another
 * mechanism (e.g. a linear attention) replaces one layer's block through {@code Qwen2Model.setAttention}
 * and supplies its own explicit backward.
 */
public interface AttentionBlock {

    /** Writes {@code out} (zeroed by the caller) and returns how to differentiate this very call. */
    Gradient forward(HeadLayout layout, Tensor q, Tensor k, Tensor v, Tensor out);

    /** Parameters of the block itself (none for softmax); named after the layer, saved with the model. */
    default List<Parameter> parameters() {
        return List.of();
    }

    /** An independent copy (parameters copied), for {@code Qwen2Model.copy}. */
    AttentionBlock copy();

    /** The backward of one forward call. */
    @FunctionalInterface
    interface Gradient {
        /** Adds ∂loss/∂q, ∂k, ∂v into the given tensors, from ∂loss/∂out. */
        void accumulate(Tensor dOut, Tensor dq, Tensor dk, Tensor dv);
    }
}
