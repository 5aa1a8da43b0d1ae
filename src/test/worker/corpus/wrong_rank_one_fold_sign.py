"""Wrong: the rank-one fold subtracts the bias direction: compact_keys - beta·u.

Source: ZIB-IOL/FrankWolfe.jl#223 — bug in rank-one arithmetic
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("rank-one-fold-sign", "1.0")

@worker.operation("foldbias.rank_one_fold", precisions=("f64",))
def rank_one_fold(inputs, params, precision):
    ck, beta, u = inputs["compact_keys"], inputs["beta"], inputs["u"]
    return {"folded_keys": ck - beta[:, None] * u[None, :]}


if __name__ == "__main__":
    worker.serve()
