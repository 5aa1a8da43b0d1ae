"""Rejected worker: Attention Matching's default β solver in place of NNLS — unconstrained least squares, then every
weight clamped up to 1e-12. It serves only foldbias.nnls; the fold-bias contracts must fail with it."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("clamped-lstsq-nnls", "1.0")


@worker.operation("foldbias.nnls", precisions=("f64",))
def nnls(inputs, params, precision):
    w = np.linalg.lstsq(inputs["a"], inputs["b"], rcond=None)[0]
    return {"w": np.maximum(w, 1e-12)}


if __name__ == "__main__":
    worker.serve()
