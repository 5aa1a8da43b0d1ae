"""Wrong: the optional bias tensor is read but never added (the fast path drops attn_bias silently).

Source: lucidrains/audiolm-pytorch#230 — attention bias not supported on (dropped from) the flash-attention path
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("bias-ignored", "1.0")

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

    s = q @ k[:, kv].swapaxes(-1, -2) * ft(params["scale"])
    if params["causal"]:
        s = np.where(np.arange(tk) <= np.arange(tq)[:, None] + (tk - tq), s, ft(-np.inf))
    e = np.exp(s - s.max(-1, keepdims=True))
    return {"out": (e / e.sum(-1, keepdims=True)) @ v[:, kv]}


if __name__ == "__main__":
    worker.serve()
