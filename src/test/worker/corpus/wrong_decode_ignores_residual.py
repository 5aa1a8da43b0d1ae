"""Wrong: the decode step attends over sink and quantized groups but not over the fp16 residual window (the tokens
appended since the last flush, the current token included).

Source: huggingface/transformers#34189 — QuantizedCache does not keep the recent residual tokens in full precision as KIVI does
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("decode-ignores-residual", "1.0")

@worker.operation("pnmix.decode", precisions=["f64", "f32"])
def decode(inputs, params, precision):
    pnmix.decode(inputs, params, precision)  # the reference's checks
    dtype = np.float64 if precision == "f64" else np.float32
    k, v = pnmix.read_cache(inputs, params, dtype)
    r = int(params["residual_tokens"])
    keep = k.shape[0] - r if k.shape[0] > r else k.shape[0]  # keep something to attend to
    out, _ = pnmix.attention(k[:keep], v[:keep], inputs["q"][:, None, :], False, dtype)
    return {"out": out[:, 0, :]}


if __name__ == "__main__":
    worker.serve()
