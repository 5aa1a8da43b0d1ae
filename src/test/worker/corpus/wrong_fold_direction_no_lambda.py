"""Wrong: the fold direction's KKT system built without the ridge term (lambda ignored): it solves the constrained
problem for lambda = 0.

Source: mahmoodlab/HEST#140 — ridge alpha argument declared but ignored
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("fold-direction-no-lambda", "1.0")

@worker.operation("foldbias.fold_direction", precisions=("f64",))
def fold_direction(inputs, params, precision):
    a = inputs["a"]
    rows, d = a.shape
    mean = a.mean(axis=0)
    m = np.zeros((d + 1, d + 1))
    m[:d, :d] = 2 * (a.T @ a)  # + 2·lambda·I forgotten
    m[:d, d] = mean
    m[d, :d] = mean
    rhs = np.append(2 * a.sum(axis=0), 1.0)
    return {"u": np.linalg.solve(m, rhs)[:d]}


if __name__ == "__main__":
    worker.serve()
