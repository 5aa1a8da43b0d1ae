"""Wrong: key selection scores each key by the sum (total attention mass) over the queries instead of the maximum.

Source: RandolphVI/Multi-Label-Text-Classification#14 — attention weights aggregated by a mean instead of the published rule
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("select-keys-sum", "1.0")

@worker.operation("foldbias.select_keys", precisions=("f64",))
def select_keys(inputs, params, precision):
    w = inputs["weights"]
    t = int(params["t"])
    score = w.sum(axis=0)
    order = np.argsort(-score, kind="stable")
    return {"indices": np.sort(order[:t]).astype(np.int64)}


if __name__ == "__main__":
    worker.serve()
