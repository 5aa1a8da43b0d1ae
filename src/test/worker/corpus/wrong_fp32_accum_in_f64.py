"""Wrong: fp64 attention computed in float32 (scores, softmax and p·v accumulated in fp32, result cast to fp64).

Source: flagos-ai/FlagGems#2310 — fp64 matmul operands cast to fp32 inside tl.dot: an "fp64" result with fp32 error
Serves attention at f64 only; the answer carries fp32 rounding, far above the fp64 FlashAttention rule.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402

worker = Worker("fp32-accum-in-f64", "1.0")


@worker.operation("attention", precisions=("f64",))
def attention(inputs, params, precision):
    q, k, v = (inputs[n].astype(np.float32) for n in ("q", "k", "v"))
    bias = inputs.get("bias")
    b, hq, tq, d = q.shape
    hkv, tk = k.shape[1], k.shape[2]
    kh = np.repeat(k, hq // hkv, axis=1)
    vh = np.repeat(v, hq // hkv, axis=1)
    s = q @ kh.swapaxes(-1, -2) * np.float32(params["scale"])
    if bias is not None:
        s = s + np.repeat(bias.astype(np.float32), hq // hkv, axis=1)[:, :, None, :]
    if params["causal"]:
        s = np.where(np.arange(tk)[None, :] <= np.arange(tq)[:, None] + (tk - tq), s, np.float32(-np.inf))
    e = np.exp(s - s.max(-1, keepdims=True))
    return {"out": ((e / e.sum(-1, keepdims=True)) @ vh).astype(np.float64)}


if __name__ == "__main__":
    worker.serve()
