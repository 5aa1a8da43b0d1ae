package org.mechspec.model;

/** A named model tensor (Hugging Face name) and, while it is trainable, its gradient. */
public final class Parameter {
    private final String name;
    private final Tensor value;
    private Tensor grad;

    public Parameter(String name, Tensor value, boolean trainable) {
        this.name = name;
        this.value = value;
        setTrainable(trainable);
    }

    public String name() {
        return name;
    }

    public Tensor value() {
        return value;
    }

    /** The gradient accumulated by backward passes, or null while frozen. */
    public Tensor grad() {
        return grad;
    }

    public boolean trainable() {
        return grad != null;
    }

    /** Freezing drops the gradient; unfreezing starts from a zero gradient. */
    public void setTrainable(boolean trainable) {
        if (trainable && grad == null) {
            grad = Tensor.zeros(value.precision(), value.shape());
        } else if (!trainable) {
            grad = null;
        }
    }

    public void zeroGrad() {
        if (grad != null) {
            grad.fill(0.0);
        }
    }

    Parameter copy() {
        Parameter p = new Parameter(name, value.copy(), false);
        if (grad != null) {
            p.grad = grad.copy();
        }
        return p;
    }

    @Override
    public String toString() {
        return name + " " + value + (trainable() ? " trainable" : " frozen");
    }
}
