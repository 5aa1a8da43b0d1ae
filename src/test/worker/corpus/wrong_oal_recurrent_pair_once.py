"""Wrong: the recurrent form keeps each unordered pair k_i·k_j (i < j) once in its state but gives it the coefficient
M[g_i, g_j]·q_i·q_j only, forgetting the symmetric M[g_j, g_i] term (a factor 2 lost on the cross terms).

Source: lucidrains/performer-pytorch#40 — causal (recurrent) linear attention computed part of the formula wrong, disagreeing with the dense form
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import oal  # noqa: E402

worker = Worker("oal-recurrent-pair-once", "1.0")

@worker.operation("oal.recurrent", precisions=("f64", "f32"))
def recurrent(inputs, params, precision):
    real_where = np.where

    def where_once(cond, a, b):  # the reference's `pair + pairᵀ` off the diagonal becomes `pair`
        if isinstance(cond, np.ndarray) and cond.dtype == bool and cond.ndim == 2 and cond.shape[0] == cond.shape[1] \
                and np.array_equal(cond, np.eye(cond.shape[0], dtype=bool)):
            return a
        return real_where(cond, a, b)
    np.where = where_once
    try:
        return oal.recurrent(inputs, params, precision)
    finally:
        np.where = real_where


if __name__ == "__main__":
    worker.serve()
