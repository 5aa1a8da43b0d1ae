"""Wrong: round_to_half flushes results below the smallest normal fp16 (2^-14) to zero (flush-to-zero), instead of
rounding to the fp16 subnormals.

Source: invergent-ai/surogate#162 — float_to_fp16 flushes every fp16-subnormal value to zero
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("half-subnormal-flush", "1.0")

@worker.operation("round_to_half", precisions=("exact",))
def round_to_half(inputs, params, precision):
    x = inputs["x"]
    with np.errstate(all="ignore"):
        y = x.astype(np.float16).astype(np.float64)
    y = np.where(np.abs(y) < 2.0 ** -14, np.copysign(0.0, x), y)  # FTZ
    return {"y": y}


if __name__ == "__main__":
    worker.serve()
