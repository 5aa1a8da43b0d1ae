"""Wrong: round_to_half with ties away from zero (floor(|x|/ulp + 0.5)) instead of ties to even.

Source: VoidStarKat/half-rs#25 — f32/f64 to f16 conversion rounded ties away from zero instead of to even
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("round-half-ties-away", "1.0")

@worker.operation("round_to_half", precisions=("exact",))
def round_to_half(inputs, params, precision):
    x = inputs["x"]
    a = np.abs(x)
    with np.errstate(all="ignore"):
        e = np.maximum(np.frexp(a)[1] - 1, -14) - 10
        r = np.ldexp(np.floor(np.ldexp(a, -e) + 0.5), e)  # ties away from zero
        r = np.where(r >= 65536, np.inf, r)
        r = np.where(np.isnan(a), np.nan, r)
    return {"y": np.copysign(r, x)}


if __name__ == "__main__":
    worker.serve()
