"""Wrong: the bias [B, Hkv, Tk] is broadcast over the wrong axis: batch 0's bias is applied to every batch (the
kernel reads it with batch stride 0, as for a bias of batch size 1).

Source: huggingface/candle#1920 — attention mask broadcast on the batch dimension
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("bias-batch-broadcast", "1.0")

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
        s = s + bias[:1, kv, None, :]  # batch stride 0
    if params["causal"]:
        s = np.where(np.arange(tk) <= np.arange(tq)[:, None] + (tk - tq), s, ft(-np.inf))
    e = np.exp(s - s.max(-1, keepdims=True))
    return {"out": (e / e.sum(-1, keepdims=True)) @ v[:, kv]}


if __name__ == "__main__":
    worker.serve()
