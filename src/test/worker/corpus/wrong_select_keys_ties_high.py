"""Wrong: key selection breaks ties toward the higher index (sorting by score with the later key first), where the
definition keeps the lower index.

Source: NervanaSystems/ngraph#2710 — TopK returned the higher index for equal values; the spec keeps the lower
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("select-keys-ties-high", "1.0")

@worker.operation("foldbias.select_keys", precisions=("f64",))
def select_keys(inputs, params, precision):
    w = inputs["weights"]
    t = int(params["t"])
    score = w.max(axis=0) if w.shape[0] else np.full(w.shape[1], -np.inf)
    order = np.lexsort((-np.arange(score.size), -score))  # equal scores: higher index first
    return {"indices": np.sort(order[:t]).astype(np.int64)}


if __name__ == "__main__":
    worker.serve()
