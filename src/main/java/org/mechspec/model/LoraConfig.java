package org.mechspec.model;

/** LoRA hyper-parameters: rank r, α (the update is scaled by α/r) and the dropout probability on its input. */
public record LoraConfig(int rank, double alpha, double dropout) {

    public LoraConfig {
        if (rank <= 0) {
            throw new IllegalArgumentException("LoRA rank must be positive, got " + rank);
        }
        if (!(alpha > 0) || Double.isInfinite(alpha)) {
            throw new IllegalArgumentException("LoRA alpha must be positive and finite, got " + alpha);
        }
        if (!(dropout >= 0 && dropout < 1)) {
            throw new IllegalArgumentException("LoRA dropout must be in [0, 1), got " + dropout);
        }
    }

    public double scale() {
        return alpha / rank;
    }
}
