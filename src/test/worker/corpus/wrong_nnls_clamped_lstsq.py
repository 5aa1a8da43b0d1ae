"""Wrong: "NNLS" as unconstrained least squares with the negative weights clamped to zero afterwards.

Source: scipy/scipy#25389 — nnls returned a point that is not the NNLS minimizer (the clamped LS point is not optimal)
Clamping is not a projection onto the solution of the constrained problem: the clamped weights no longer
minimize the residual and the gradient is not zero on the weights that stayed positive.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("nnls-clamped-lstsq", "1.0")

@worker.operation("foldbias.nnls", precisions=("f64",))
def nnls(inputs, params, precision):
    w = np.linalg.lstsq(inputs["a"], inputs["b"], rcond=None)[0]
    return {"w": np.maximum(w, 0.0)}


if __name__ == "__main__":
    worker.serve()
