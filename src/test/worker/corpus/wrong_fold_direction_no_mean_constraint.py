"""Wrong: the fold direction as plain ridge regression u = (AᵀA + λI)⁻¹Aᵀ1, without the constraint mean(A·u) = 1.

Source: statsmodels/statsmodels#3624 — ridge fit shortcut solves a different problem than the one requested
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("fold-direction-no-constraint", "1.0")

@worker.operation("foldbias.fold_direction", precisions=("f64",))
def fold_direction(inputs, params, precision):
    a = inputs["a"]
    d = a.shape[1]
    lam = float(params["lambda"])
    return {"u": np.linalg.solve(a.T @ a + lam * np.eye(d), a.sum(axis=0))}


if __name__ == "__main__":
    worker.serve()
