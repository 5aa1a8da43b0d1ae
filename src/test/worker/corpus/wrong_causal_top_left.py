"""Wrong: the causal mask is aligned top-left (query i sees key j iff j <= i), which is right only when Tq == Tk;
PROTOCOL.md aligns it bottom-right (j <= i + Tk - Tq: the queries are the last Tq positions).

Source: NVIDIA/cutlass#2336 — Blackwell FMHA causal mask misbehaves when qlen != klen (bottom-right alignment expected)
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("causal-top-left", "1.0")

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
    if bias is not None:
        s = s + bias[:, kv, None, :]
    if params["causal"]:
        s = np.where(np.arange(tk) <= np.arange(tq)[:, None], s, ft(-np.inf))  # no Tk - Tq offset
    e = np.exp(s - s.max(-1, keepdims=True))
    return {"out": (e / e.sum(-1, keepdims=True)) @ v[:, kv]}


if __name__ == "__main__":
    worker.serve()
