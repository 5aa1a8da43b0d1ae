"""Rejected worker: attention that returns zeros of the right shape and dtype. It serves only attention; every
contract that judges an attention output must fail with it."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("zero-attention", "1.0")


@worker.operation("attention", precisions=("f64", "f32"))
def attention(inputs, params, precision):
    q, v = inputs["q"], inputs["v"]
    return {"out": np.zeros(q.shape[:3] + v.shape[3:], dtype=q.dtype)}


if __name__ == "__main__":
    worker.serve()
