"""A rejected worker: a quantizer whose min/max scale divides the group's range by 2^b instead of 2^b - 1.

Codes are computed consistently with that scale (rint((x - zero)/scale), clamped to the b-bit range), so the top
level zero + (2^b - 1)*scale falls short of the group's max and values near the max are clipped. Only
quantize_per_channel and quantize_per_token are served; mechspec's own implementation serves the rest (the
layout is the reference's, so its dequantizer and attention read these blocks). 1-bit conditional-means groups
have no such division and stay the reference's.

    mvn -B verify -Dmechspec.implementation="python3 src/test/worker/scale_power_of_two_worker.py"
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("scale-over-2-to-the-b", "1.0")


def two_to_the_b(bits):
    """The wrong divisor: 2^b (the reference divides by 2^b - 1)."""
    return np.int64(1) << np.asarray(bits, dtype=np.int64)


@worker.operation("pnmix.quantize_per_channel", precisions=["exact"])
def quantize_per_channel(inputs, params, precision):
    return pnmix.quantize_per_channel(inputs, params, precision, scale_levels_fn=two_to_the_b)


@worker.operation("pnmix.quantize_per_token", precisions=["exact"])
def quantize_per_token(inputs, params, precision):
    return pnmix.quantize_per_token(inputs, params, precision, scale_levels_fn=two_to_the_b)


if __name__ == "__main__":
    worker.serve()
