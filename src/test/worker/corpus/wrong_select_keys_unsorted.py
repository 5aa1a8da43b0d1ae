"""Wrong: key selection returns the right t keys in descending score order (topk's order), not in increasing index
order as the definition requires.

Source: NVIDIA/kvpress#173 — ScorerPress keeps topk indices in score order, not in temporal order
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("select-keys-unsorted", "1.0")

@worker.operation("foldbias.select_keys", precisions=("f64",))
def select_keys(inputs, params, precision):
    w = inputs["weights"]
    t = int(params["t"])
    score = w.max(axis=0) if w.shape[0] else np.full(w.shape[1], -np.inf)
    order = np.argsort(-score, kind="stable")
    return {"indices": order[:t].astype(np.int64)}  # not sorted by index


if __name__ == "__main__":
    worker.serve()
