"""A rejected worker for `mechspec bench --implementation`: decode attends over the fp16 sink and residual tokens only
and skips the quantized groups, the bulk of the cache's bytes, so it is fast for the wrong reason; its outputs are
wrong wherever the skipped keys carry weight.

    target/mechspec/bin/mechspec bench --implementation "python3 src/test/worker/lazy_decode_worker.py"
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "main", "worker", "python"))

import numpy as np  # noqa: E402

from mechspec_worker import Worker  # noqa: E402
from reference import pnmix  # noqa: E402

worker = Worker("lazy-decode", "1.0")


@worker.operation("pnmix.decode", precisions=["f64", "f32"])
def decode(inputs, params, precision):
    dtype = np.float64 if precision == "f64" else np.float32
    layout = pnmix.cache_layout(inputs, params)
    sink = layout["sink_tokens"]
    quantized = layout["groups"] * layout["group_tokens"]

    def blocks(part):  # the sink, then the residual moved up to follow it
        fp16 = layout["fp16"]
        shape = (-1, layout["kv_heads"], layout["head_dim"])
        s = fp16["sink_keys" if part == "keys" else "sink_values"]
        r = fp16["residual_keys" if part == "keys" else "residual_values"]
        if s.shape[0]:
            yield 0, s.astype(dtype).reshape(shape)
        if r.shape[0]:
            yield sink, r.astype(dtype).reshape(shape)

    length = layout["length"] - quantized
    if length == 0:
        return pnmix.decode(inputs, params, precision)
    out, _ = pnmix.blocked_attention(blocks, length, inputs["q"].astype(dtype)[:, None, :], False, dtype)
    return {"out": out[:, 0, :]}


if __name__ == "__main__":
    worker.serve()
