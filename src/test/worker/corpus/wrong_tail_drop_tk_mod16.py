"""Wrong: a tiled kernel whose tail tile loses the last key: when Tk is not a multiple of the 16-key tile, the
last key is never read (loop bound (Tk - 1) // 16 * 16 + (Tk % 16) - 1 style off-by-one).

Source: pytorch/pytorch#159247 — Flex Attention accuracy issue when kv length is not a multiple of the kv block size
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("tail-drop-tk-mod16", "1.0")

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
    if tk % 16 and tk > 1:
        tk -= 1  # the partial tile's last key is dropped
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
