package org.mechspec.model;

import java.nio.file.Path;
import java.util.List;

/** Named tensors stored on disk: one safetensors file or a sharded set. */
public interface TensorSource extends AutoCloseable {

    /** The files this source reads (index first for a sharded set), for hashing what a load used. */
    List<Path> files();

    /** Tensor names in storage order. */
    List<String> names();

    /** The stored shape of a tensor. */
    int[] shape(String name);

    DType dtype(String name);

    /** Decodes a tensor into the given precision; throws naming the tensor when its bytes hold NaN or ±inf. */
    default Tensor read(String name, Precision precision) {
        Tensor t = Tensor.zeros(precision, shape(name));
        readInto(name, t);
        return t;
    }

    /**
     * Decodes a tensor straight into {@code target} (same shape, any precision), widening or rounding each element
     * once; throws naming the tensor when the shapes differ or its bytes hold NaN or ±inf, and {@code target} may
     * then hold part of the tensor.
     */
    void readInto(String name, Tensor target);

    @Override
    void close();
}
