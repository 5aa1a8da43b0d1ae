package org.mechspec.model;

import java.util.List;

/** Named tensors stored on disk: one safetensors file or a sharded set. */
public interface TensorSource extends AutoCloseable {

    /** Tensor names in storage order. */
    List<String> names();

    /** The stored shape of a tensor. */
    int[] shape(String name);

    DType dtype(String name);

    /** Decodes a tensor into the given precision; throws naming the tensor when its bytes hold NaN or ±inf. */
    Tensor read(String name, Precision precision);

    @Override
    void close();
}
