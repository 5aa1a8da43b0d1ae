package org.mechspec.model;

/**
 * Deliberately broken variants of the model's own code paths, one per contract, so each contract's mutant test
 * can show the check reports false. Set on a model through package-private {@code Qwen2Model.withMutant}.
 */
enum Mutant {
    NONE,
    /** RoPE backward rotates the gradient forward instead of back: breaks the gradient check. */
    ROPE_BACKWARD_SAME_DIRECTION,
    /** The q projection's bias gradient is never accumulated: breaks the gradient check. */
    Q_BIAS_GRAD_MISSING,
    /** LoRA's A gradient uses the input before dropout: breaks the LoRA gradient check. */
    LORA_A_GRAD_IGNORES_DROPOUT,
    /** LoRA B starts random instead of zero: a fresh adapter changes the logits. */
    LORA_B_RANDOM_INIT,
    /** Merging adds B·A without the α/r scale: merged and unmerged forwards differ. */
    MERGE_WITHOUT_SCALE,
    /** AdamW steps along +gradient: overfitting one batch makes the loss rise. */
    ADAMW_ASCENT,
    /** The safetensors writer rounds values to bf16 while declaring F32: save → load no longer round-trips. */
    WRITER_ROUNDS_TO_BF16,
    /** RoPE rotates by −angle in the forward pass: the fixture's perplexity no longer matches its record. */
    ROPE_SIGN_FLIPPED
}
