"""Wrong: split-K (flash-decoding) attention over chunks of 32 keys whose partial softmax is 0/0 = NaN when the
causal mask hides a whole chunk from a query (max = -inf, exp(-inf - -inf)); the combine step multiplies that
NaN by a zero weight, which stays NaN. Without a mask, or where every chunk has a visible key, it is right.

Source: ROCm/aiter#4420 — split-KV decode reduce did not guard NaN/empty splits; one non-finite partial poisons the output
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("split-k-masked-nan", "1.0")

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
        s = np.where(np.arange(tk) <= np.arange(tq)[:, None] + (tk - tq), s, ft(-np.inf))
    vh = v[:, kv]
    parts = []
    with np.errstate(all="ignore"):
        for j in range(0, tk, 32):
            sj = s[..., j:j + 32]
            m = sj.max(-1, keepdims=True)
            e = np.exp(sj - m)
            l = e.sum(-1, keepdims=True)
            parts.append((m, l, (e @ vh[:, :, j:j + 32]) / l))
        mx = np.max([m for m, _, _ in parts], axis=0)
        num = sum(np.exp(m - mx) * l * o for m, l, o in parts)
        den = sum(np.exp(m - mx) * l for m, l, _ in parts)
    return {"out": (num / den).astype(ft)}


if __name__ == "__main__":
    worker.serve()
