"""Wrong: the rank-one fold with a fused multiply-add (compact_keys + beta·u rounded once), which PROTOCOL.md rules
out (one rounded multiply, then one rounded add). Emulated exactly with Python fractions.

Source: SauersML/gam#1686 — NVRTC FMA contraction (fmad on by default) breaks GPU/CPU bit parity
The results differ from the definition in the last bit of some elements only.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("rank-one-fold-fma", "1.0")

from fractions import Fraction


@worker.operation("foldbias.rank_one_fold", precisions=("f64",))
def rank_one_fold(inputs, params, precision):
    ck, beta, u = inputs["compact_keys"], inputs["beta"], inputs["u"]
    t, d = ck.shape
    out = np.empty((t, d))
    uf = [Fraction(float(x)) for x in u]
    for j in range(t):
        bj = Fraction(float(beta[j]))
        for i in range(d):
            out[j, i] = float(Fraction(float(ck[j, i])) + bj * uf[i])  # fma: one rounding
    return {"folded_keys": out}


if __name__ == "__main__":
    worker.serve()
