"""Wrong: the dense form's causal mask is off by one (tril with k=1): position t also sees token t+1.

Source: open-lm-engine/accelerated-model-architectures#480 — linear-attention causal mask row > col vs row >= col
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import oal  # noqa: E402

worker = Worker("oal-causal-sees-next", "1.0")

@worker.operation("oal.dense", precisions=("f64", "f32"))
def dense(inputs, params, precision):
    real_tril = np.tril
    np.tril = lambda m, k=0: real_tril(m, k + 1)  # the off-by-one, inside the reference's dense form
    try:
        return oal.dense(inputs, params, precision)
    finally:
        np.tril = real_tril


if __name__ == "__main__":
    worker.serve()
