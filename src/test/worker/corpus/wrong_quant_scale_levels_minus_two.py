"""Wrong: min/max quantizer scale off by one level: range / (2^b - 2) instead of range / (2^b - 1), so the top code
overshoots the group's max and every level is stretched. Codes are rint((x - zero)/scale) with that scale.

Source: rosinality/glow-pytorch#17 — n_bins = 2^bits where 2^bits - 1 levels are meant (off-by-one quantization levels)
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("quant-scale-levels-minus-two", "1.0")

def levels_minus_two(bits):
    return np.maximum((np.int64(1) << np.asarray(bits, dtype=np.int64)) - 2, 1)


@worker.operation("pnmix.quantize_per_channel", precisions=["exact"])
def quantize_per_channel(inputs, params, precision):
    return pnmix.quantize_per_channel(inputs, params, precision, scale_levels_fn=levels_minus_two)


@worker.operation("pnmix.quantize_per_token", precisions=["exact"])
def quantize_per_token(inputs, params, precision):
    return pnmix.quantize_per_token(inputs, params, precision, scale_levels_fn=levels_minus_two)


if __name__ == "__main__":
    worker.serve()
