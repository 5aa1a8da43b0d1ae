"""Wrong: 1/sqrt(D) applied to both q and k (so z carries 1/D): the scale placement of a softmax port that scales
q and k symmetrically, but by D^-1/2 each instead of D^-1/4.

Source: FrancescoSaverioZuppichini/ViT#2 — attention scaling applied at the wrong place
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import oal  # noqa: E402

worker = Worker("oal-scale-both-q-and-k", "1.0")

def scaled(fn):
    def op(inputs, params, precision):
        k = inputs["k"]
        ks = k * k.dtype.type(1.0 / np.sqrt(k.shape[3]))
        return fn(dict(inputs, k=ks), params, precision)
    return op


worker.add("oal.dense", scaled(oal.dense), ("f64", "f32"))
worker.add("oal.recurrent", scaled(oal.recurrent), ("f64", "f32"))


if __name__ == "__main__":
    worker.serve()
