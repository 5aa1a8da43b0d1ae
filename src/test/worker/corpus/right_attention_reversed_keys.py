"""Right: attention with the keys (and values, bias and causal mask) visited in reverse order and the softmax sum
accumulated pairwise: the same function, a different accumulation order.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import InvalidArgument, Worker  # noqa: E402

worker = Worker("attention-reversed-keys", "1.0")

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
    hkv, tk = k.shape[1], k.shape[2]
    kv = np.arange(hq) // (hq // hkv)
    kr, vr = k[:, kv, ::-1], v[:, kv, ::-1]  # key j is at position tk - 1 - j
    s = np.einsum("bhqd,bhkd->bhqk", q, kr) * ft(params["scale"])
    if bias is not None:
        s = s + bias[:, kv, None, ::-1]
    if params["causal"]:
        j = tk - 1 - np.arange(tk)
        s = np.where(j <= np.arange(tq)[:, None] + (tk - tq), s, ft(-np.inf))
    e = np.exp(s - s.max(-1, keepdims=True))
    total = np.add.reduce(e, axis=-1, keepdims=True)  # NumPy's pairwise summation
    return {"out": ((e / total) @ vr).astype(ft, copy=False)}


if __name__ == "__main__":
    worker.serve()
