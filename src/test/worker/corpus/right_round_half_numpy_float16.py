"""Right: round_to_half by NumPy's own float64 -> float16 cast (round to nearest even, directly from float64,
subnormals kept, overflow to inf).
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("round-half-numpy-float16", "1.0")

@worker.operation("round_to_half", precisions=("exact",))
def round_to_half(inputs, params, precision):
    with np.errstate(over="ignore"):
        return {"y": inputs["x"].astype(np.float16).astype(np.float64)}


if __name__ == "__main__":
    worker.serve()
