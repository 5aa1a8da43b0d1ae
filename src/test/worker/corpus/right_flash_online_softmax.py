"""Right: FlashAttention-style attention: keys in tiles of 32, a running max and running sum per query row
(online softmax), the output rescaled tile by tile and divided once at the end. Arithmetic in the request's
precision throughout.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import InvalidArgument, Worker  # noqa: E402

worker = Worker("flash-online-softmax", "1.0")

FT = {"f64": np.float64, "f32": np.float32}


def check(q, k, v, bias, params):
    b, hq, tq, d = q.shape
    if k.shape[:2] != (b, k.shape[1]) or k.shape[3] != d or v.shape[:3] != k.shape[:3] or hq % k.shape[1]:
        raise InvalidArgument("q, k, v shapes do not agree")
    if bias is not None and bias.shape != k.shape[:3]:
        raise InvalidArgument("bias shape")
    if not 0 < params["scale"] < np.inf:
        raise InvalidArgument("scale must be positive and finite")
    if params["causal"] and k.shape[2] < tq:
        raise InvalidArgument("causal attention needs key_len >= query_len")


@worker.operation("attention", precisions=("f64", "f32"))
def attention(inputs, params, precision):
    ft = FT[precision]
    q, k, v, bias = inputs["q"], inputs["k"], inputs["v"], inputs.get("bias")
    check(q, k, v, bias, params)
    b, hq, tq, d = q.shape
    hkv, tk, dv = k.shape[1], k.shape[2], v.shape[3]
    kv = np.arange(hq) // (hq // hkv)
    kh, vh = k[:, kv], v[:, kv]
    bh = None if bias is None else bias[:, kv, None, :]
    scale = ft(params["scale"])
    m = np.full((b, hq, tq, 1), -np.inf, ft)
    l = np.zeros((b, hq, tq, 1), ft)
    acc = np.zeros((b, hq, tq, dv), ft)
    rows = np.arange(tq)[:, None] + (tk - tq)
    with np.errstate(invalid="ignore", over="ignore"):
        for j in range(0, tk, 32):
            s = (q @ kh[:, :, j:j + 32].swapaxes(-1, -2)) * scale
            if bh is not None:
                s = s + bh[..., j:j + 32]
            if params["causal"]:
                s = np.where(np.arange(j, min(j + 32, tk)) <= rows, s, ft(-np.inf))
            m_new = np.maximum(m, s.max(-1, keepdims=True))
            # a tile wholly masked for a row leaves m_new = -inf; its weights are then 0, never NaN
            safe = np.where(np.isfinite(m_new), m_new, ft(0))
            p = np.exp(s - safe)
            corr = np.where(np.isfinite(m), np.exp(m - safe), ft(0))
            l = l * corr + p.sum(-1, keepdims=True)
            acc = acc * corr + p @ vh[:, :, j:j + 32]
            m = m_new
    return {"out": (acc / l).astype(ft, copy=False)}


if __name__ == "__main__":
    worker.serve()
