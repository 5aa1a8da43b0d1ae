"""Wrong: least squares by the normal equations (XᵀX)w = Xᵀy solved in float32: squares the condition number and
then loses half the digits again to fp32.

Source: jax-ml/jax#13105 — float32 lstsq / normal equations fail to recover linear-regression parameters
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("lstsq-normal-equations-fp32", "1.0")

@worker.operation("foldbias.least_squares", precisions=("f64",))
def least_squares(inputs, params, precision):
    x, y = inputs["x"].astype(np.float32), inputs["y"].astype(np.float32)
    w = np.linalg.solve(x.T @ x, x.T @ y)
    return {"w": w.astype(np.float64)}


if __name__ == "__main__":
    worker.serve()
