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
    layout = pnmix.cache_layout(inputs, params)
    length = layout["length"]
    r = layout["residual_tokens"]
    keep = length - r if length > r else length  # keep something to attend to

    def blocks(part):
        return ((at, b[:keep - at]) for at, b in pnmix.cache_blocks(inputs, layout, part, dtype) if at < keep)

    out, _ = pnmix.blocked_attention(blocks, keep, inputs["q"][:, None, :], False, dtype)
    return {"out": out[:, 0, :]}


if __name__ == "__main__":
    worker.serve()
