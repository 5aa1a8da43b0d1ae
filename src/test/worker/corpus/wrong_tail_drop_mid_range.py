"""Wrong: the last key is dropped only on the "medium" path (16 < Tk < 100 and Tk not a multiple of 16), the
one sequence-length bucket whose kernel has the tail bug; short and long key lengths take correct paths.

Source: jax-ml/jax#27224 — Pallas GPU FlashAttention forward only right when sequence lengths are multiples of the block size
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("tail-drop-mid-range", "1.0")

FT = {"f64": np.float64, "f32": np.float32}


def kv_index(hq, hkv):
    return np.arange(hq) // (hq // hkv)


@worker.operation("attention", precisions=("f64", "f32"))
def attention(inputs, params, precision):
    ft = FT[precision]
    q, k, v, bias = inputs["q"], inputs["k"], inputs["v"], inputs.get("bias")
    b, hq, tq, d = q.shape
    hkv, tk = k.shape[1], k.shape[2]
    kv = kv_index(hq, hkv)

    full = tk
    if 16 < tk < 100 and tk % 16:
        tk -= 1
        k, v = k[:, :, :tk], v[:, :, :tk]
        bias = None if bias is None else bias[:, :, :tk]
    s = q @ k[:, kv].swapaxes(-1, -2) * ft(params["scale"])
    if bias is not None:
        s = s + bias[:, kv, None, :]
    if params["causal"]:
        s = np.where(np.arange(tk) <= np.arange(tq)[:, None] + (full - tq), s, ft(-np.inf))
    e = np.exp(s - s.max(-1, keepdims=True))
    return {"out": (e / e.sum(-1, keepdims=True)) @ v[:, kv]}


if __name__ == "__main__":
    worker.serve()
