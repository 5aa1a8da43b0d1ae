package org.mechspec.model;

/**
 * What one decoder layer computed in a forward pass, token-major ([batch·seqLen, width]): its input, the
 * post-RoPE queries and keys, the values, the attention block's output (what o_proj reads) and the layer output.
 * Read-only views for mechanisms that study or replace a layer's attention; do not modify them.
 */
public record LayerActivations(HeadLayout layout, Tensor input, Tensor queries, Tensor keys, Tensor values,
                               Tensor attention, Tensor output) {
}
