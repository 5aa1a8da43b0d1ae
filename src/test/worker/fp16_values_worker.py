"""A rejected worker: a "packed" cache that keeps its values in fp16.

Its per-token quantizer computes the reference's codes and metadata, then stores as `codes` the fp16 bytes
(little-endian) of the dequantized values (zero + code*scale, rounded to fp16) instead of the packed codes; its
dequantizer and its attention read values in that layout. The attention it computes stays right (the values
differ from the reference's by at most an fp16 rounding); only the bytes the cache holds grow, by 16/bits for
value codes, which byte accounting must catch.

    mvn -B verify -Dmechspec.implementation="python3 src/test/worker/fp16_values_worker.py"
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import InvalidArgument, Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("fp16-values-cache", "1.0")


def dequantize_fp16_values(codes, meta, tokens, channels, group_channels, bits, dtype=np.float64):
    """This worker's value block: fp16 [tokens, channels] little-endian; meta as the reference's (unused)."""
    groups = pnmix.token_layout(tokens, channels, group_channels, bits)
    if meta.size != 4 * tokens * groups:
        raise InvalidArgument("per-token metadata have " + str(meta.size) + " bytes, the layout needs "
                              + str(4 * tokens * groups))
    if codes.size != 2 * tokens * channels:
        raise InvalidArgument("fp16 values have " + str(codes.size) + " bytes, the layout needs "
                              + str(2 * tokens * channels))
    return np.ascontiguousarray(codes).view("<f2").reshape(tokens, channels).astype(dtype)


# Keys keep the reference's layout; values are read in this worker's.
DEQUANTIZERS = dict(pnmix.DEQUANTIZERS, per_token=dequantize_fp16_values)


@worker.operation("pnmix.quantize_per_token", precisions=["exact"])
def quantize_per_token(inputs, params, precision):
    block = pnmix.quantize_per_token(inputs, params, precision)
    tokens, channels = inputs["x"].shape
    values = pnmix.dequantize_token_block(block["codes"], block["meta"], tokens, channels,
                                          params["group_channels"], params["bits"])
    fp16 = pnmix.to_half_bits(values).astype("<u2").reshape(-1)
    return {"codes": fp16.view(np.uint8).copy(), "meta": block["meta"]}


@worker.operation("pnmix.dequantize_per_token", precisions=["exact"])
def dequantize_per_token(inputs, params, precision):
    return pnmix.dequantize_per_token(inputs, params, precision, dequantizers=DEQUANTIZERS)


@worker.operation("pnmix.attend", precisions=["f64", "f32"])
def attend(inputs, params, precision):
    return pnmix.attend(inputs, params, precision, dequantizers=DEQUANTIZERS)


@worker.operation("pnmix.decode", precisions=["f64", "f32"])
def decode(inputs, params, precision):
    return pnmix.decode(inputs, params, precision, dequantizers=DEQUANTIZERS)


if __name__ == "__main__":
    worker.serve()
