package org.mechspec.model;

/**
 * A projection y = x·Wᵀ + b with W [out, in] (Hugging Face layout) and an optional LoRA adapter.
 * Forward, backward and the LoRA path all reduce to {@link Matmul#accumulate} on row-major operands.
 */
final class Linear {
    final String name;
    final Parameter weight;
    final Parameter bias;
    final int in;
    final int out;
    LoraAdapter lora;

    Linear(String name, Parameter weight, Parameter bias) {
        this.name = name;
        this.weight = weight;
        this.bias = bias;
        this.out = weight.value().dim(0);
        this.in = weight.value().dim(1);
    }

    /** What backward needs from one forward call; {@code dropped}/{@code scaledU} only with an active adapter. */
    record Pass(Tensor x, Tensor y, Tensor dropped, Tensor scaledU, boolean[] keep, double keepScale, int rows) {
    }

    Pass forward(Tensor x, int rows, DropoutMasks masks) {
        Precision precision = x.precision();
        Tensor y = Tensor.zeros(precision, rows, out);
        if (bias != null) {
            for (int r = 0; r < rows; r++) {
                for (int o = 0; o < out; o++) {
                    y.set(r * out + o, bias.value().get(o));
                }
            }
        }
        Matmul.accumulateTransposed(y, x, weight.value(), rows, in, out);
        if (lora == null || lora.merged()) {
            if (lora != null && masks != null) {
                throw new IllegalStateException(name + ": a merged LoRA adapter cannot be trained; unmerge first");
            }
            return new Pass(x, y, null, null, null, 1.0, rows);
        }
        int rank = lora.config.rank();
        boolean[] keep = masks == null ? null : masks.keep(name, rows);
        Tensor dropped = x;
        double keepScale = keep == null ? 1.0 : masks.keepScale();
        if (keep != null) {
            dropped = Tensor.zeros(precision, rows, in);
            for (int i = 0; i < keep.length; i++) {
                dropped.set(i, keep[i] ? x.get(i) * keepScale : 0.0);
            }
        }
        Tensor scaledU = Tensor.zeros(precision, rows, rank);
        Matmul.accumulate(scaledU, dropped, Matmul.transpose(lora.a.value(), rank, in), rows, in, rank);
        double scale = lora.config.scale();
        for (int i = 0; i < scaledU.size(); i++) {
            scaledU.set(i, scale * scaledU.get(i));
        }
        Matmul.accumulate(y, scaledU, Matmul.transpose(lora.b.value(), out, rank), rows, rank, out);
        return new Pass(x, y, dropped, scaledU, keep, keepScale, rows);
    }

    /**
     * Adds ∂loss/∂x into {@code dx} (when not null) and accumulates the gradients of the trainable parameters.
     */
    void backward(Pass p, Tensor dy, Tensor dx) {
        int rows = p.rows();
        Tensor dyT = null;
        if (weight.trainable()) {
            dyT = Matmul.transpose(dy, rows, out);
            Matmul.accumulate(weight.grad(), dyT, p.x(), out, rows, in);
        }
        if (bias != null && bias.trainable()) {
            Tensor db = bias.grad();
            for (int r = 0; r < rows; r++) {
                for (int o = 0; o < out; o++) {
                    db.add(o, dy.get(r * out + o));
                }
            }
        }
        if (dx != null) {
            Matmul.accumulate(dx, dy, weight.value(), rows, out, in);
        }
        if (p.scaledU() != null) {
            loraBackward(p, dy, dyT, dx);
        }
    }

    /** y += (s·u)·Bᵀ, u = dropped·Aᵀ, dropped = keep ⊙ x/(1−p). */
    private void loraBackward(Pass p, Tensor dy, Tensor dyT, Tensor dx) {
        int rows = p.rows();
        int rank = lora.config.rank();
        Precision precision = dy.precision();
        if (lora.b.trainable()) {
            Tensor t = dyT != null ? dyT : Matmul.transpose(dy, rows, out);
            Matmul.accumulate(lora.b.grad(), t, p.scaledU(), out, rows, rank);
        }
        Tensor du = Tensor.zeros(precision, rows, rank);
        Matmul.accumulate(du, dy, lora.b.value(), rows, out, rank);
        double scale = lora.config.scale();
        for (int i = 0; i < du.size(); i++) {
            du.set(i, scale * du.get(i));
        }
        if (lora.a.trainable()) {
            Matmul.accumulate(lora.a.grad(), Matmul.transpose(du, rows, rank), p.dropped(), rank, rows, in);
        }
        if (dx == null) {
            return;
        }
        Tensor dDropped = Tensor.zeros(precision, rows, in);
        Matmul.accumulate(dDropped, du, lora.a.value(), rows, rank, in);
        boolean[] keep = p.keep();
        for (int i = 0; i < dDropped.size(); i++) {
            if (keep == null) {
                dx.add(i, dDropped.get(i));
            } else if (keep[i]) {
                dx.add(i, dDropped.get(i) * p.keepScale());
            }
        }
    }
}
