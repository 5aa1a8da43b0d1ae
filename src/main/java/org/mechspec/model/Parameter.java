package org.mechspec.model;

/**
 * A named model tensor (Hugging Face name) and, while it is trainable, its gradient. A frozen parameter's tensor
 * may be shared with a model copy ({@link #share}); nothing writes into a shared tensor, so a model that trains
 * or merges takes its own tensor first and the other models keep theirs.
 */
public final class Parameter {
    private final String name;
    private Tensor value;
    private Tensor grad;
    private boolean trainable;
    /** Another model's parameter may hold {@link #value} too: copy it before anything may write into it. */
    private boolean sharesValue;

    public Parameter(String name, Tensor value, boolean trainable) {
        this.name = name;
        this.value = value;
        setTrainable(trainable);
    }

    public String name() {
        return name;
    }

    /** The current tensor; read it at use time, as a merge or an unfreeze may replace it. */
    public Tensor value() {
        return value;
    }

    /**
     * The gradient accumulated by backward passes, or null while frozen. It is allocated (zero) when first asked
     * for, so a model that is loaded trainable and frozen before any backward (a 2 GB checkpoint) never holds one.
     */
    public synchronized Tensor grad() {
        if (trainable && grad == null) {
            grad = Tensor.zeros(value.precision(), value.shape());
        }
        return grad;
    }

    public boolean trainable() {
        return trainable;
    }

    /**
     * Freezing drops the gradient; unfreezing starts from a zero gradient, and first gives a shared tensor a
     * private copy, so training this parameter never changes the model it was shared with.
     */
    public synchronized void setTrainable(boolean trainable) {
        if (trainable && !this.trainable && sharesValue) {
            value = value.copy();
            sharesValue = false;
        }
        if (!trainable) {
            grad = null;
        }
        this.trainable = trainable;
    }

    public synchronized void zeroGrad() {
        if (grad != null) {
            grad.fill(0.0);
        }
    }

    /** A deep copy: its own tensor, and the gradient copied while trainable. */
    Parameter copy() {
        Parameter p = new Parameter(name, value.copy(), trainable);
        p.grad = grad == null ? null : grad.copy();
        return p;
    }

    /**
     * A frozen parameter of the same name over this very tensor, for a model copy: no memory is allocated, and
     * from now on both copy the tensor before they are unfrozen.
     */
    Parameter share() {
        if (trainable()) {
            throw new IllegalStateException(name + " is trainable: only a frozen tensor can be shared");
        }
        sharesValue = true;
        Parameter p = new Parameter(name, value, false);
        p.sharesValue = true;
        return p;
    }

    /**
     * Points this parameter at another tensor of the same precision and shape (copy-on-write instead of writing
     * into a tensor that may be shared). {@code shared}: another model may hold {@code t}; a trainable parameter
     * then takes a copy of it, a frozen one copies it before it is unfrozen.
     */
    void replaceValue(Tensor t, boolean shared) {
        if (t.precision() != value.precision() || !t.hasShape(value.shape())) {
            throw new IllegalArgumentException(name + " is " + value + ", cannot hold " + t);
        }
        if (shared && trainable()) {
            value = t.copy();
            sharesValue = false;
        } else {
            value = t;
            sharesValue = shared;
        }
    }

    @Override
    public String toString() {
        return name + " " + value + (trainable() ? " trainable" : " frozen");
    }
}
