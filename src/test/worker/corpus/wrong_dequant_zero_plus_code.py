"""Wrong: dequantization as zero + code, the scale never multiplied in; served in both dequantizers and in the
attention that reads the cache through them.

Source: openvinotoolkit/openvino#34105 — KV-cache quantization left scale 0, so dequantized data was always the zero point
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("dequant-zero-plus-code", "1.0")

def no_scale(dequantize):
    def read(codes, meta, *args):
        meta = pnmix.meta_bytes(np.full(meta.size // 4, 0x3C00, dtype=np.uint16),  # scale forced to 1.0
                                np.ascontiguousarray(meta).view("<u2")[1::2])
        return dequantize(codes, meta, *args)
    return read


DEQ = {"per_channel": no_scale(pnmix.dequantize_channel_block), "per_token": no_scale(pnmix.dequantize_token_block)}


@worker.operation("pnmix.dequantize_per_channel", precisions=["exact"])
def dequantize_per_channel(inputs, params, precision):
    return pnmix.dequantize_per_channel(inputs, params, precision, dequantizers=DEQ)


@worker.operation("pnmix.dequantize_per_token", precisions=["exact"])
def dequantize_per_token(inputs, params, precision):
    return pnmix.dequantize_per_token(inputs, params, precision, dequantizers=DEQ)


@worker.operation("pnmix.attend", precisions=["f64", "f32"])
def attend(inputs, params, precision):
    return pnmix.attend(inputs, params, precision, dequantizers=DEQ)


@worker.operation("pnmix.decode", precisions=["f64", "f32"])
def decode(inputs, params, precision):
    return pnmix.decode(inputs, params, precision, dequantizers=DEQ)


if __name__ == "__main__":
    worker.serve()
