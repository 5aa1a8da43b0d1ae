"""Wrong: round_to_half by truncation (round toward zero): the low mantissa bits are dropped instead of rounded.

Source: dmlc/mshadow#368 — float2half() truncated extra significand bits instead of rounding to nearest even
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("round-half-truncate", "1.0")

@worker.operation("round_to_half", precisions=("exact",))
def round_to_half(inputs, params, precision):
    x = inputs["x"]
    a = np.abs(x)
    with np.errstate(all="ignore"):
        e = np.maximum(np.frexp(a)[1] - 1, -14) - 10
        r = np.ldexp(np.trunc(np.ldexp(a, -e)), e)  # truncation, not nearest
        r = np.where(r > 65504, np.inf, r)
        r = np.where(np.isnan(a), np.nan, r)
    return {"y": np.copysign(r, x)}


if __name__ == "__main__":
    worker.serve()
