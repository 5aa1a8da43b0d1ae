"""Wrong: Lawson-Hanson NNLS with a loose stopping rule (a variable enters only if its gradient exceeds 1e-4 of the
largest initial gradient) and at most 5 outer iterations: it stops early with KKT violations left.

Source: scipy/scipy#4161 — NNLS iteration cap too small in practice; stopping early leaves a non-optimal point
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("nnls-loose-tolerance", "1.0")

@worker.operation("foldbias.nnls", precisions=("f64",))
def nnls(inputs, params, precision):
    a, b = inputs["a"], inputs["b"]
    cols = a.shape[1]
    tol = 1e-4 * max(np.abs(a.T @ b).max(), 1e-300)  # loose, relative to the first gradient
    w = np.zeros(cols)
    passive = np.zeros(cols, dtype=bool)
    for _ in range(5):  # too few outer iterations
        grad = a.T @ (b - a @ w)
        cand = np.where(~passive & (grad > tol), grad, -np.inf)
        j = int(np.argmax(cand))
        if cand[j] == -np.inf:
            break
        passive[j] = True
        while True:
            z = np.zeros(cols)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            neg = passive & (z <= 0)
            if not neg.any():
                w = z
                break
            with np.errstate(all="ignore"):
                alpha = np.min(np.where(neg, w / (w - z), np.inf))
            w = w + alpha * (z - w)
            passive &= w > 1e-15
            w[~passive] = 0.0
    return {"w": w}


if __name__ == "__main__":
    worker.serve()
