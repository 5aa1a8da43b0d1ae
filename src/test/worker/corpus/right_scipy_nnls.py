"""Right: foldbias.nnls by SciPy's scipy.optimize.nnls (its own Lawson-Hanson active-set solver).
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import InvalidArgument, Worker  # noqa: E402

worker = Worker("scipy-nnls", "1.0")

from scipy.optimize import nnls as scipy_nnls


@worker.operation("foldbias.nnls", precisions=("f64",))
def nnls(inputs, params, precision):
    a, b = inputs["a"], inputs["b"]
    if a.ndim != 2 or b.shape != (a.shape[0],) or a.size == 0:
        raise InvalidArgument(f"a {list(a.shape)} and b {list(b.shape)} do not form an NNLS problem")
    w, _ = scipy_nnls(a, b)
    return {"w": np.ascontiguousarray(w, dtype=np.float64)}


if __name__ == "__main__":
    worker.serve()
