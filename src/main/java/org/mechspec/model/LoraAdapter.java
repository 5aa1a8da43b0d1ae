package org.mechspec.model;

/**
 * The low-rank update of one projection: W + (α/r)·B·A with A [r, in] and B [out, r], applied to the dropped-out
 * input (PEFT's order: y = x·Wᵀ + b + (α/r)·drop(x)·Aᵀ·Bᵀ). While merged, the base weight holds W + (α/r)·B·A and
 * the original W is kept aside so unmerging restores it bit for bit.
 */
public final class LoraAdapter {
    private final String target;
    final Parameter a;
    final Parameter b;
    final LoraConfig config;
    Tensor unmergedBase;

    LoraAdapter(String target, Parameter a, Parameter b, LoraConfig config) {
        this.target = target;
        this.a = a;
        this.b = b;
        this.config = config;
    }

    /** Name of the adapted projection, e.g. {@code model.layers.0.self_attn.q_proj}. */
    public String target() {
        return target;
    }

    public Parameter a() {
        return a;
    }

    public Parameter b() {
        return b;
    }

    public LoraConfig config() {
        return config;
    }

    public boolean merged() {
        return unmergedBase != null;
    }

    /** The dense update ΔW = (α/r)·B·A [out, in], in double. */
    public double[] delta() {
        return delta(config.scale());
    }

    double[] delta(double scale) {
        int r = config.rank();
        int out = b.value().dim(0);
        int in = a.value().dim(1);
        double[] d = new double[out * in];
        for (int o = 0; o < out; o++) {
            for (int k = 0; k < r; k++) {
                double bk = scale * b.value().get(o * r + k);
                for (int i = 0; i < in; i++) {
                    d[o * in + i] += bk * a.value().get(k * in + i);
                }
            }
        }
        return d;
    }

    LoraAdapter copy() {
        LoraAdapter c = new LoraAdapter(target, a.copy(), b.copy(), config);
        c.unmergedBase = unmergedBase == null ? null : unmergedBase.copy();
        return c;
    }
}
